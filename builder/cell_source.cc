#include "builder/cell_source.h"

#include <algorithm>
#include <map>

#include "builder/base_pin.h"
#include "core/error.h"
#include "dockerfiles/generate.h"
#include "matrix/matrix.h"

namespace imgtool::builder {

CellSource load_cells(const fs::path& input, const fs::path& state_dir, const matrix::KnowledgeBase& kb,
                      engine::Engine* engine, const RegistryDigest& registry) {
  CellSource src;
  if (fs::is_directory(input)) {
    src.generated_dirs = {input};
    src.cells = load_generated_folder(input);
    src.kb_version = src.cells.front().kb_version;
    return src;
  }
  matrix::Plan plan = matrix::plan_matrix(input.string(), kb);
  std::vector<std::string> pinned;
  if (engine) pinned = pin_bases(plan, *engine, registry);
  src = generate_cells(plan, state_dir / "generated" / input.stem());
  src.pinned = std::move(pinned);
  return src;
}

CellSource generate_cells(const matrix::Plan& plan, const fs::path& out_dir) {
  CellSource src;
  src.generated_dirs = {out_dir};
  auto gen = dockerfiles::generate_each(
      plan.kept, {.out_dir = out_dir, .kb_version = plan.kb_version, .kb_released = plan.kb_released});
  for (auto& g : gen.generated) src.cells.push_back(from_generated(g));  // in memory: no cell.json read back
  for (auto& f : gen.failed)
    src.cells.push_back({.cell = f.cell, .kb_version = plan.kb_version, .generate_error = "generate: " + f.reason});
  std::sort(src.cells.begin(), src.cells.end(), [](auto& a, auto& b) { return a.cell.tag < b.cell.tag; });
  src.skipped = plan.skipped.size();
  src.warnings = plan.warnings;
  src.kb_version = plan.kb_version;
  return src;
}

CellSource load_cells(const std::vector<fs::path>& inputs, const fs::path& state_dir, const matrix::KnowledgeBase& kb,
                      engine::Engine* engine, const RegistryDigest& registry) {
  if (inputs.empty()) throw InputError("expected a matrix file or a folder of generated cells, found none");
  if (inputs.size() == 1) return load_cells(inputs[0], state_dir, kb, engine, registry);
  std::map<std::string, fs::path> stems, tags;  // stem / tag -> the input it came from
  for (auto& in : inputs) {
    if (fs::is_directory(in)) continue;
    auto [at, fresh] = stems.emplace(in.stem().string(), in);
    if (!fresh)
      throw InputError(in.string() + ": expected matrix files with different names, found '" + in.stem().string() +
                       "' as " + at->second.string() + " too (both would be generated into generated/" +
                       in.stem().string() + "); rename one");
  }
  CellSource all;
  for (auto& in : inputs) {
    CellSource one = load_cells(in, state_dir, kb, engine, registry);
    for (auto& c : one.cells) {
      auto [at, fresh] = tags.emplace(c.cell.tag, in);
      if (!fresh)
        throw InputError(in.string() + ": expected tags no other input has, found '" + c.cell.tag + "' in " +
                         at->second.string() + " too");
      all.cells.push_back(std::move(c));
    }
    all.generated_dirs.push_back(one.generated_dirs.at(0));
    all.skipped += one.skipped;
    all.warnings.insert(all.warnings.end(), one.warnings.begin(), one.warnings.end());
    for (auto& line : one.pinned)
      if (std::find(all.pinned.begin(), all.pinned.end(), line) == all.pinned.end()) all.pinned.push_back(line);
    if (all.kb_version.empty()) all.kb_version = one.kb_version;
  }
  std::sort(all.cells.begin(), all.cells.end(), [](auto& a, auto& b) { return a.cell.tag < b.cell.tag; });
  return all;
}

std::string describe_dirs(const CellSource& src) {
  std::string out;
  for (auto& d : src.generated_dirs) out += (out.empty() ? "" : ", ") + d.string();
  return out;
}

}  // namespace imgtool::builder
