// One resolved cell of the version matrix: everything that determines one
// image. Produced by the matrix library (matrix.h), consumed by the
// Dockerfile generator (dockerfiles/), and written to cell.json beside each
// generated Dockerfile (the builder and nightly read cells back from there).
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/version.h"

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
  std::string min_driver_paddle;      // Paddle's documented floor for this build ("" = none documented)
  std::string base_image;             // e.g. "nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04"
  std::string base_digest;            // "sha256:…" pin, or empty (tag-only: a warning)
  // Set by the builder from the engine (builder/base_pin.h), never by a matrix, and outside the
  // inputs hash (an image built on one engine stays up to date on another that lacks its base):
  // base_id  the base's image ID there ("sha256:…"; label io.imgtool.base-id, which the up-to-date
  //          check and reproduce compare with the engine's base);
  // base_from what FROM names instead of the tag: "name:tag@sha256:…" (a pulled base's registry
  //          digest) or the image ID (a base made here; classic builder only). "" = the tag.
  std::string base_id, base_from;
  std::string pip_requirement;           // e.g. "paddlepaddle-gpu==3.1.0"
  std::string pip_index_url;             // empty when a wheelhouse is used
  std::string wheelhouse;                // local folder of wheels for offline builds, or empty
  std::string template_name = "paddle";  // dockerfiles/<template_name>.Dockerfile.in
  // The recipe behind the claims (rules recipe-*: every claim is what the recipe installs).
  std::string cuda_base;            // "nvidia" (nvidia/cuda), "wheels" (kb/cuda_wheels.yaml) or "none"
  std::string cudnn_from;           // "base" (the base ships it), "apt" (NVIDIA's repo), "pip" (Paddle's wheel)
  std::string cudnn_full;           // the cuDNN the image gets, full version ("8.6.0.163"; "" = unknown)
  std::string cudnn_package;        // apt: the pinned package the template installs
  bool pip_cuda_libraries = false;  // Paddle's wheel brings its own CUDA libraries (the base has none)
  std::string cuda_archs;           // GPU code of Paddle's libraries (io.imgtool.cuda-archs); "" = unknown
  // Reported for the build but not read from a wheel (kb/paddle.yaml reported_archs): shown, never trusted.
  std::string cuda_archs_reported, cuda_archs_reported_source;
  // Paddle builds that dlopen unversioned names (libcublas.so): "unversioned=soname" pairs the
  // template links (kb/libraries.yaml paddle_loads).
  std::vector<std::string> dynload_links;
  std::map<std::string, std::string> overrides;  // per-cell extra build values
  std::vector<std::string> warnings;             // UNCONFIRMED facts relied on, Python EOL, tag-only base…
  std::vector<std::string> sources;              // sources of the facts this cell relies on
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Cell, repository, tag, variant, flavor, paddle, python, os, cuda, cudnn,
                                                trt, min_driver, min_driver_full, min_driver_paddle, base_image,
                                                base_digest, base_id, base_from, pip_requirement, pip_index_url,
                                                wheelhouse, template_name, cuda_base, cudnn_from, cudnn_full,
                                                cudnn_package, pip_cuda_libraries, cuda_archs, cuda_archs_reported,
                                                cuda_archs_reported_source, dynload_links, overrides, warnings, sources)

// The driver floor the image claims (label io.imgtool.min-driver, NVIDIA_REQUIRE_CUDA's driver>=):
// the stricter of NVIDIA's minor-version floor and Paddle's documented one.
// (Header-only: dockerfiles/ renders cells without linking the matrix library.)
inline std::string effective_min_driver(const Cell& c) {
  if (c.min_driver_paddle.empty()) return c.min_driver;
  if (c.min_driver.empty()) return c.min_driver_paddle;
  return *Version::parse(c.min_driver_paddle) > *Version::parse(c.min_driver) ? c.min_driver_paddle : c.min_driver;
}

}  // namespace imgtool::matrix
