// Where the builder's cells come from: a matrix file (plan → generate into
// the state folder) or a folder that `imgtool generate` already wrote. Either
// way the result is the generated-folder contract (generated_cell.h).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "builder/generated_cell.h"

namespace imgtool::builder {

struct CellSource {
  std::vector<GeneratedCell> cells;  // kept cells, sorted by tag
  fs::path generated_dir;            // the folder the cells live in
  size_t skipped = 0;                // combinations the matrix rules excluded
  std::vector<std::string> warnings; // plan-wide warnings
  std::string kb_version;
};

// `input` is a folder of generated cells, or a matrix file that is planned
// (KnowledgeBase::load_default()) and generated into
// <state_dir>/generated/<file stem>. Generation is deterministic, so an
// unchanged matrix gives unchanged inputs hashes. A cell that cannot be
// generated (dockerfiles::generate_each) is still listed, with its
// generate_error set, so it fails alone. InputError on bad input.
CellSource load_cells(const fs::path& input, const fs::path& state_dir);

}  // namespace imgtool::builder
