#include "builder/generated_cell.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"

namespace imgtool::builder {

GeneratedCell load_generated_cell(const fs::path& dir) {
  fs::path file = dir / "cell.json";
  if (!fs::exists(file))
    throw InputError(file.string() + ": expected a generated cell (imgtool generate), found no cell.json");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file.string() + ": expected JSON, found a parse error: " + e.what());
  }
  GeneratedCell g;
  g.dir = dir;
  try {
    g.cell = j.at("cell").get<matrix::Cell>();
    g.inputs_hash = j.at("inputs_hash").get<std::string>();
    g.kb_version = j.value("kb_version", "");
    const auto build = j.value("build", nlohmann::json::object());
    g.stage = build.value("stage", "");
    g.stage_key = build.value("stage_key", "");
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file.string() + ": expected {\"cell\", \"inputs_hash\", \"kb_version\"}, found: " + e.what());
  }
  if (g.cell.tag.empty()) throw InputError(file.string() + ": cell.tag: expected a tag, found an empty string");
  if (!is_sha256_digest(g.inputs_hash))
    throw InputError(file.string() + ": inputs_hash: expected sha256:<64 hex>, found '" + g.inputs_hash + "'");
  if (!fs::exists(g.dockerfile()))
    throw InputError(dir.string() + ": expected a Dockerfile beside cell.json, found none; fix: re-run imgtool generate");
  return g;
}

std::vector<GeneratedCell> load_generated_folder(const fs::path& root) {
  if (!fs::is_directory(root))
    throw InputError(root.string() + ": expected a folder of generated cells, found no such folder");
  std::vector<GeneratedCell> cells;
  for (auto& e : fs::directory_iterator(root))
    if (e.is_directory() && fs::exists(e.path() / "cell.json")) cells.push_back(load_generated_cell(e.path()));
  if (cells.empty())
    throw InputError(root.string() + ": expected <tag>/cell.json folders (imgtool generate --out), found none");
  std::sort(cells.begin(), cells.end(), [](auto& a, auto& b) { return a.cell.tag < b.cell.tag; });
  for (size_t i = 1; i < cells.size(); ++i)
    if (cells[i].cell.tag == cells[i - 1].cell.tag)
      throw InputError(root.string() + ": expected unique tags, found '" + cells[i].cell.tag + "' twice");
  return cells;
}

std::vector<GeneratedCell> select_tags(std::vector<GeneratedCell> cells, const std::vector<std::string>& only) {
  if (only.empty()) return cells;
  std::set<std::string> want(only.begin(), only.end());
  std::vector<GeneratedCell> kept;
  for (auto& c : cells)
    if (want.erase(c.cell.tag)) kept.push_back(std::move(c));
  if (!want.empty()) {
    std::string missing;
    for (auto& t : want) missing += (missing.empty() ? "" : ", ") + t;
    throw InputError("--only: expected tags of the matrix, found unknown tag(s): " + missing);
  }
  return kept;
}

}  // namespace imgtool::builder
