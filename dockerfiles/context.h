// Build-context files a generated folder carries besides its Dockerfile:
// today the wheels of an offline cell's wheelhouse (wheels/*.whl).
// A wheelhouse can be ~200 MB, so files are hard-linked into the folder when
// it is on the same filesystem as the wheelhouse, and copied otherwise.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "matrix/cell.h"

namespace imgtool::dockerfiles {

struct ContextFile {
  std::filesystem::path source;  // on the host
  std::string dest;              // relative to the cell folder, e.g. "wheels/numpy-….whl"
  std::string sha256;            // "sha256:<hex>" of the contents
};

// The wheelhouse's *.whl files, sorted by name, hashed. InputError if the
// folder is missing or holds no wheel for the cell's pinned requirement.
std::vector<ContextFile> wheelhouse_files(const matrix::Cell& cell);

// Hard-links (or, across filesystems, copies) each file into `cell_dir`.
// Returns how many were hard-linked.
size_t place_context_files(const std::vector<ContextFile>& files, const std::filesystem::path& cell_dir);

}  // namespace imgtool::dockerfiles
