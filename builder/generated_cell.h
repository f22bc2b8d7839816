// A generated cell folder, the builder's input contract (ARCHITECTURE.md):
//   D/<tag>/Dockerfile   D/<tag>/cell.json   D/<tag>/<context files>
// cell.json: dockerfiles/cell_file.h (one struct, written by the generator, read here).
// The folder is the docker build context; the inputs hash names everything
// that went into it, so an unchanged hash means an unchanged image.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "matrix/cell.h"

namespace imgtool::dockerfiles {
struct GeneratedCell;
}

namespace imgtool::builder {

namespace fs = std::filesystem;

struct GeneratedCell {
  fs::path dir;  // build context; holds Dockerfile and cell.json
  matrix::Cell cell;
  std::string inputs_hash;  // "sha256:…"
  std::string kb_version;
  std::string stage;                          // the generator's shared first stage ("" = none)
  std::string stage_key;                      // its key: cells with equal keys share it ("" = none)
  std::map<std::string, std::string> labels;  // what the Dockerfile's final stage already sets
  // Set when the cell could not be generated (build/nightly: it fails alone
  // with this reason; `dir` is empty and nothing is built for it).
  std::string generate_error;
  fs::path dockerfile() const { return dir / "Dockerfile"; }
};

// Reads dir/cell.json. Throws InputError naming the file and the field when the
// folder does not follow the contract.
GeneratedCell load_generated_cell(const fs::path& dir);

// The cell the generator has just written (dockerfiles::generate_each), taken in memory: its cell.json
// is not read back; the same checks as load_generated_cell apply.
GeneratedCell from_generated(const dockerfiles::GeneratedCell& g);

// Every immediate subfolder of root holding a cell.json, sorted by tag.
// Throws InputError when there is none or two cells share a tag.
std::vector<GeneratedCell> load_generated_folder(const fs::path& root);

// Keeps the cells whose tag is in `only` (all when empty); InputError names
// any requested tag that is not in the set.
std::vector<GeneratedCell> select_tags(std::vector<GeneratedCell> cells, const std::vector<std::string>& only);

}  // namespace imgtool::builder
