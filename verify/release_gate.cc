#include "verify/release_gate.h"

#include "core/error.h"
#include "verify/static_checks.h"

namespace imgtool::verify {

std::vector<CheckResult> GateResult::failed() const {
  std::vector<CheckResult> out;
  for (const auto& c : report.checks)
    if (c.status == Status::kFail) out.push_back(c);
  return out;
}

std::vector<std::string> GateResult::failed_lines() const {
  std::vector<std::string> out;
  for (const auto& c : failed()) out.push_back(c.id + ": expected " + c.expected + ", found " + c.found);
  return out;
}

GateResult release_gate(const GateInputs& in) {
  if (!in.source || !in.kb) throw InputError("release gate: expected an image source and a knowledge base");
  VerifyOptions opt{.signature = false, .kb = in.kb};  // the default policy: contents gated
  StaticResult s = check_static({.ref = in.ref, .source = in.source, .tag = in.tag}, opt, in.inventory);
  return {std::move(s.report), std::move(s.inventory), s.layer_reads};
}

}  // namespace imgtool::verify
