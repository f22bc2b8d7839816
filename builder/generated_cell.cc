#include "builder/generated_cell.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/json_file.h"
#include "core/refname.h"
#include "core/strings.h"
#include "dockerfiles/cell_file.h"
#include "dockerfiles/generate.h"

namespace imgtool::builder {

namespace {

bool is_stage_key(std::string_view s) {  // 12 lowercase hex (dockerfiles/stages.h), or none
  return s.empty() || (s.size() == 12 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos);
}

// What cell.json may hold in the fields that become file names (logs/<tag>.log), image
// names, docker arguments and lines of bake.sh: a generated folder travels between CI steps,
// so it is input like any other, never trusted because imgtool once wrote it.
struct CellField {
  const char* name;
  const std::string& (*get)(const GeneratedCell&);
  bool (*ok)(std::string_view);
  const char* expected;
};

const CellField kCellFields[] = {
    {"cell.tag", [](const GeneratedCell& g) -> const std::string& { return g.cell.tag; }, refname::is_tag,
     "a Docker tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})"},
    {"cell.repository", [](const GeneratedCell& g) -> const std::string& { return g.cell.repository; },
     [](std::string_view v) { return !refname::check_name(v, false); }, "a Docker image name"},
    {"build.stage", [](const GeneratedCell& g) -> const std::string& { return g.stage; },
     [](std::string_view v) { return v.empty() || refname::is_tag(v); },
     "a stage name ([A-Za-z0-9_][A-Za-z0-9_.-]*) or none"},
    {"build.stage_key", [](const GeneratedCell& g) -> const std::string& { return g.stage_key; }, is_stage_key,
     "12 lowercase hex digits or none"},
};

void check_fields(const fs::path& file, const GeneratedCell& g) {
  for (const CellField& f : kCellFields) {
    const std::string& v = f.get(g);
    if (!f.ok(v))
      throw InputError(file.string() + ": " + f.name + ": expected " + f.expected + ", found " + strings::quoted(v) +
                       "; fix: re-run imgtool generate");
  }
}

// The cell `f` describes, in folder `dir`, checked as a folder from elsewhere is (`file` names it).
GeneratedCell checked_cell(const fs::path& dir, const fs::path& file, dockerfiles::CellFile f) {
  GeneratedCell g;
  g.dir = dir;
  g.cell = std::move(f.cell);
  g.inputs_hash = std::move(f.inputs_hash);
  g.kb_version = std::move(f.kb_version);
  g.stage = std::move(f.build.stage);
  g.stage_key = std::move(f.build.stage_key);
  g.labels = std::move(f.labels);
  check_fields(file, g);
  if (!is_sha256_digest(g.inputs_hash))
    throw InputError(file.string() + ": inputs_hash: expected sha256:<64 hex>, found '" + g.inputs_hash + "'");
  if (!fs::exists(g.dockerfile()))
    throw InputError(dir.string() +
                     ": expected a Dockerfile beside cell.json, found none; fix: re-run imgtool generate");
  return g;
}

}  // namespace

GeneratedCell load_generated_cell(const fs::path& dir) {
  fs::path file = dir / "cell.json";
  if (!fs::exists(file))
    throw InputError(file.string() + ": expected a generated cell (imgtool generate), found no cell.json");
  nlohmann::json j = read_json_file(file, "a generated cell (imgtool generate)");
  dockerfiles::CellFile f;
  try {
    f = j.get<dockerfiles::CellFile>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file.string() + ": expected {\"cell\", \"inputs_hash\", \"kb_version\"}, found: " + e.what());
  }
  return checked_cell(dir, file, std::move(f));
}

GeneratedCell from_generated(const dockerfiles::GeneratedCell& g) {
  return checked_cell(g.dir, g.dir / "cell.json", g.file);
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
