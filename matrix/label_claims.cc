#include "matrix/label_claims.h"

#include "matrix/labels.h"

namespace imgtool::matrix {
namespace {

struct LabelField {
  const char* label;
  std::string LabelClaims::*to;
  bool claim;  // one of labels::kClaims
};

const LabelField kFields[] = {
    {labels::kPaddle, &LabelClaims::paddle, true},
    {labels::kPython, &LabelClaims::python, true},
    {labels::kVariant, &LabelClaims::variant, true},
    {labels::kFlavor, &LabelClaims::flavor, true},
    {labels::kCuda, &LabelClaims::cuda, true},
    {labels::kCudnn, &LabelClaims::cudnn, true},
    {labels::kTensorrt, &LabelClaims::tensorrt, true},
    {labels::kMinDriver, &LabelClaims::min_driver, true},
    {labels::kCudaArchs, &LabelClaims::cuda_archs, true},
    {labels::kTag, &LabelClaims::tag, false},
    {labels::kInputsHash, &LabelClaims::inputs_hash, false},
    {labels::kKbVersion, &LabelClaims::kb_version, false},
    {labels::kStageOf, &LabelClaims::stage_of, false},
    {labels::kStageKey, &LabelClaims::stage_key, false},
    {labels::kBaseCuda, &LabelClaims::base_cuda, false},
};

}  // namespace

LabelClaims read_label_claims(const std::map<std::string, std::string>& labels) {
  LabelClaims c;
  for (const auto& f : kFields)
    if (auto it = labels.find(f.label); it != labels.end()) c.*f.to = it->second;
  return c;
}

std::map<std::string, std::string> LabelClaims::claims() const {
  std::map<std::string, std::string> out;
  for (const auto& f : kFields)
    if (f.claim && !(this->*f.to).empty()) out[std::string(labels::field(f.label))] = this->*f.to;
  return out;
}

}  // namespace imgtool::matrix
