// What an image CLAIMS to be: its io.imgtool.* labels (ARCHITECTURE.md,
// "Image labels"), the fields its tag name encodes, and NVIDIA_REQUIRE_CUDA.
//
// Tag names (matrix/tag_template.h): "{paddle}-gpu-cuda{cuda}-cudnn{cudnn}[-trt{trt}][-{dev}]"
// and "{paddle}[-{dev}]"; tokens pyX.Y / pyXY / pythonX.Y / cpu are read too.
// Unknown tokens are ignored (they claim nothing).
#pragma once
#include <map>
#include <string>

#include "image/config.h"

namespace imgtool::verify {

// Field names: "paddle", "python", "variant", "cuda", "cudnn", "tensorrt",
// "min-driver", "flavor" (the label is "io.imgtool.<field>").
struct Claims {
  std::map<std::string, std::string> labels;    // field -> label value (empty claims omitted)
  std::map<std::string, std::string> from_tag;  // field -> value read from the tag name
  std::string tag;                              // the tag the claims were read from ("" if none)
  std::string require_cuda;                     // NVIDIA_REQUIRE_CUDA ("" if unset)
  std::map<std::string, std::string> env;       // the config's Env, NAME -> value (the NVIDIA runtime acts on it)
  std::string base_cuda;                        // io.imgtool.base.cuda: a CUDA base made by scripts/make-cuda-base.sh
  std::string label(const std::string& field) const;  // "" if absent
  bool gpu() const { return label("variant") == "gpu"; }
  // A CUDA base image (no Paddle claims of its own): verify checks its library set instead.
  bool cuda_base() const { return !base_cuda.empty() && label("paddle").empty(); }
};

std::map<std::string, std::string> parse_tag_claims(const std::string& tag);

// The labels (matrix::read_label_claims) and Env of the image's config; `tag` the tag the image was
// referenced by (or "" — then the io.imgtool.tag label, if any, is used).
Claims read_claims(const image::ImageConfig& config, const std::string& tag);

}  // namespace imgtool::verify
