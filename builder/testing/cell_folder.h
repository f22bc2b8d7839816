// Test helper: a generated cell folder (builder/generated_cell.h) written as dockerfiles::generate
// writes one -- cell.json through dockerfiles::CellFile, the Dockerfile, the shared first stage and its
// key from dockerfiles::shared_stage -- and read back by the builder's own reader. For the tests of
// everything that takes such folders (the builder, prune, the nightly).
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "builder/generated_cell.h"
#include "core/fs.h"
#include "core/hash.h"
#include "dockerfiles/cell_file.h"
#include "dockerfiles/stages.h"

namespace imgtool::builder::testing {

// Writes dir/cell.json and dir/Dockerfile for `f` and loads the folder. Left empty in `f`: the inputs
// hash (sha256 of the tag, Python and Dockerfile), the KB version ("t") and the shared stage (the
// Dockerfile's, as the generator computes it).
inline GeneratedCell write_cell(const std::filesystem::path& dir, dockerfiles::CellFile f,
                                const std::string& dockerfile = "FROM base\n") {
  if (f.inputs_hash.empty()) f.inputs_hash = sha256_digest(f.cell.tag + f.cell.python + dockerfile);
  if (f.kb_version.empty()) f.kb_version = "t";
  if (f.build.stage.empty()) f.build = dockerfiles::shared_stage(dockerfile);
  write_file_atomic(dir / "cell.json", nlohmann::json(f).dump());
  write_file_atomic(dir / "Dockerfile", dockerfile);
  return load_generated_cell(dir);
}

}  // namespace imgtool::builder::testing
