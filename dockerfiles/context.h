// Build-context files a generated folder carries besides its Dockerfile:
// the wheels of an offline cell's wheelhouse (wheels/*.whl) and their hash lock.
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

// The hash lock of an offline cell (issue 35): one line per project in the wheelhouse,
//   name==version --hash=sha256:<hex> [--hash=…]
// (name and version read from each wheel's file name, PEP 427; one --hash per file of that
// version, lines in name order), for `pip install --require-hashes -r requirements.lock`: pip
// installs exactly these bytes or fails. Of the cell's own project (its pip_requirement) only the
// pinned version is locked: a wheelhouse may serve several Paddle versions. InputError when it
// holds two versions of another project (a lock pins one) or a file name is no wheel name.
std::string wheel_lock(const std::vector<ContextFile>& files, const matrix::Cell& cell);
inline constexpr const char* kWheelLockFile = "requirements.lock";

// Hard-links (or, across filesystems, copies) each file into `cell_dir`.
// Returns how many were hard-linked.
size_t place_context_files(const std::vector<ContextFile>& files, const std::filesystem::path& cell_dir);

}  // namespace imgtool::dockerfiles
