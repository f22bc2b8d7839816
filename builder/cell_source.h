// Where the builder's cells come from: a matrix file (plan → generate into
// the state folder) or a folder that `imgtool generate` already wrote. Either
// way the result is the generated-folder contract (generated_cell.h).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "builder/base_pin.h"
#include "builder/generated_cell.h"
#include "engine/engine.h"
#include "matrix/kb.h"
#include "matrix/matrix.h"

namespace imgtool::builder {

struct CellSource {
  std::vector<GeneratedCell> cells;      // kept cells, sorted by tag
  std::vector<fs::path> generated_dirs;  // the folders the cells live in, one per input
  size_t skipped = 0;                    // combinations the matrix rules excluded
  std::vector<std::string> warnings;     // plan-wide warnings
  std::vector<std::string> pinned;       // bases pinned by the engine (base_pin.h), one line each
  std::string kb_version;
};

// `input` is a folder of generated cells, or a matrix file that is planned
// with `kb` (the run's one knowledge base: the CLI's --kb, else its default) and generated into
// <state_dir>/generated/<file stem>. Generation is deterministic, so an
// unchanged matrix gives unchanged inputs hashes. A cell that cannot be
// generated (dockerfiles::generate_each) is still listed, with its
// generate_error set, so it fails alone. InputError on bad input. With `engine`, a matrix's
// tag-only bases that engine holds are pinned first (pin_bases: FROM by digest or image ID), and
// those it lacks by what `registry` says their tags are now (when given: the CLI's registry_digest).
CellSource load_cells(const fs::path& input, const fs::path& state_dir, const matrix::KnowledgeBase& kb,
                      engine::Engine* engine = nullptr, const RegistryDigest& registry = nullptr);

// A plan's kept cells generated into `out_dir` and handed over in memory (from_generated: the
// generator's own structs, no cell.json read back; the folder is the build context). A cell that
// cannot be generated is listed with its generate_error. load_cells and `plan --emit bake` use it.
CellSource generate_cells(const matrix::Plan& plan, const fs::path& out_dir);

// Several inputs in one run (`imgtool nightly M1 M2`, `imgtool build M1 M2`): each loaded as
// above, their cells together, sorted by tag. Refused (InputError, before anything is built) when
// a tag is in two inputs (the state store and the registry know a cell by its tag) or when two
// matrix files would be generated into one folder (the same file stem).
CellSource load_cells(const std::vector<fs::path>& inputs, const fs::path& state_dir, const matrix::KnowledgeBase& kb,
                      engine::Engine* engine = nullptr, const RegistryDigest& registry = nullptr);

// "DIR" or "DIR1, DIR2": where the cells come from, for progress lines.
std::string describe_dirs(const CellSource& src);

}  // namespace imgtool::builder
