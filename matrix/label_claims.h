// ONE reading of an image's io.imgtool.* labels (matrix/labels.h names them) into a typed struct:
// what verify holds against the layers (verify/claims_model.h), what select and doctor match
// against this host (host/registry_candidates.h), what run-config fits a profile to
// (run/image_facts.h) and what the smoke expects (smoke/smoke_runner.h) all come from here.
// An absent label reads as "" (it claims nothing).
#pragma once
#include <map>
#include <string>

namespace imgtool::matrix {

struct LabelClaims {
  // The claims (labels::kClaims), checked against the image's contents.
  std::string paddle, python, variant, flavor, cuda, cudnn, tensorrt, min_driver, cuda_archs;
  // Bookkeeping.
  std::string tag, inputs_hash, kb_version, stage_of, stage_key;
  std::string base_cuda;  // io.imgtool.base.cuda: a CUDA base image (scripts/make-cuda-base.sh)

  // The claims that are set, field -> value ("paddle" -> "3.2.0"; labels::field() names).
  std::map<std::string, std::string> claims() const;
};

LabelClaims read_label_claims(const std::map<std::string, std::string>& labels);

}  // namespace imgtool::matrix
