// One resolved cell of the version matrix: everything that determines one
// image. Produced by the matrix library (matrix.h), consumed by the
// Dockerfile generator (dockerfiles/), and written to cell.json beside each
// generated Dockerfile (the builder and nightly read cells back from there).
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace imgtool::matrix {

struct Cell {
  std::string repository = "paddle";  // image name without registry
  std::string tag;                    // e.g. "3.1.0-gpu-cuda12.6-cudnn9.5"; unique in a matrix
  std::string variant;                // "gpu" | "cpu"
  std::string flavor = "runtime";     // "runtime" | "devel"
  std::string paddle;                 // "3.1.0"
  std::string python;                 // "3.10"
  std::string os;                     // "ubuntu22.04"
  std::string cuda;                   // "12.6" (empty for cpu)
  std::string cudnn;                  // "9.5"  (empty for cpu)
  std::string trt;                    // "10.5" or empty when the image ships none
  std::string min_driver;             // minimum host driver (minor-version compat), e.g. "525.60.13"
  std::string min_driver_full;        // driver of the toolkit release (full compatibility)
  std::string base_image;             // e.g. "nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04"
  std::string base_digest;            // "sha256:…" pin, or empty (tag-only: a warning)
  std::string pip_requirement;        // e.g. "paddlepaddle-gpu==3.1.0"
  std::string pip_index_url;          // empty when a wheelhouse is used
  std::string wheelhouse;             // local folder of wheels for offline builds, or empty
  std::string template_name = "paddle";  // dockerfiles/<template_name>.Dockerfile.in
  std::map<std::string, std::string> overrides;  // per-cell extra build values
  std::vector<std::string> warnings;  // UNCONFIRMED facts relied on, Python EOL, tag-only base…
  std::vector<std::string> sources;   // sources of the facts this cell relies on
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Cell, repository, tag, variant, flavor, paddle, python, os,
                                                cuda, cudnn, trt, min_driver, min_driver_full, base_image,
                                                base_digest, pip_requirement, pip_index_url, wheelhouse,
                                                template_name, overrides, warnings, sources)

}  // namespace imgtool::matrix
