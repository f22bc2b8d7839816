#include "builder/cell_source.h"

#include <algorithm>

#include "dockerfiles/generate.h"
#include "matrix/matrix.h"

namespace imgtool::builder {

CellSource load_cells(const fs::path& input, const fs::path& state_dir) {
  CellSource src;
  if (fs::is_directory(input)) {
    src.generated_dir = input;
    src.cells = load_generated_folder(input);
    src.kb_version = src.cells.front().kb_version;
    return src;
  }
  matrix::Plan plan = matrix::plan_matrix(input.string(), matrix::KnowledgeBase::load_default());
  src.generated_dir = state_dir / "generated" / input.stem();
  auto gen = dockerfiles::generate_each(plan.kept, {.out_dir = src.generated_dir, .kb_version = plan.kb_version});
  for (auto& g : gen.generated) src.cells.push_back(load_generated_cell(g.dir));
  for (auto& f : gen.failed)
    src.cells.push_back({.cell = f.cell, .kb_version = plan.kb_version, .generate_error = "generate: " + f.reason});
  std::sort(src.cells.begin(), src.cells.end(), [](auto& a, auto& b) { return a.cell.tag < b.cell.tag; });
  src.skipped = plan.skipped.size();
  src.warnings = plan.warnings;
  src.kb_version = plan.kb_version;
  return src;
}

}  // namespace imgtool::builder
