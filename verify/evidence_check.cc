#include "verify/evidence_check.h"

#include <algorithm>
#include <tuple>

#include "core/error.h"
#include "core/gpu_arch.h"
#include "sign/attestation.h"

namespace imgtool::verify {

namespace {

// Newer first: imgtool's signing time, then the probe's start (attestations written before
// `attested` existed sort below every stamped one).
bool newer(const smoke::SmokeEvidence& a, const smoke::SmokeEvidence& b) {
  return std::tie(a.attested, a.time) > std::tie(b.attested, b.time);
}

}  // namespace

EvidenceCheck check_evidence(image::Repository& repo, const std::string& digest, EVP_PKEY& key) {
  EvidenceCheck c;
  sign::AttestationCheck a;
  std::vector<sign::Statement> valid = sign::verified_attestations(repo, digest, key, smoke::kSmokePredicateType, &a);
  c.found = a.found;
  std::string bad;
  for (const auto& st : valid) {
    try {
      c.all.push_back(smoke::from_predicate(st.predicate));
    } catch (const CheckFailed& e) {
      bad = e.what();
    }
  }
  std::stable_sort(c.all.begin(), c.all.end(), newer);
  if (!c.all.empty()) c.evidence = c.all.front();
  c.ok = c.evidence.has_value();
  c.considered = valid.size();
  if (!c.ok) c.why = bad.empty() ? a.summary() : bad;
  return c;
}

namespace {

const char* const kTitle = "how the image was smoked (signed hardware evidence)";

CheckResult row(Status s, const std::string& expected, const std::string& found, const std::string& fix) {
  return {"smoke.evidence", kTitle, s, expected, found, fix};
}

const char* const kGetHardware =
    "smoke it on a GPU host (`imgtool nightly` there, or the Kubernetes smoke Jobs of `imgtool plan --emit k8s` "
    "and `imgtool nightly collect --key`), which attests the result";

}  // namespace

std::string hardware_gap(const smoke::SmokeEvidence& e, const std::string& archs) {
  if (!e.hardware_pass()) return e.summary();
  for (const auto& d : e.devices)
    if (std::string gap = kernel_gap(archs, d.cc); !gap.empty())
      return e.summary() + ", but the image was not compiled for " + d.name + " (" + gap + ")";
  return "";
}

namespace {

bool has_device(const smoke::SmokeEvidence& e, int cc) {
  for (const auto& d : e.devices)
    if (parse_arch(d.cc) == cc) return true;
  return false;
}

// Per required capability: the newest valid attestation with a device of it must be a bound pass.
std::string family_gap(const EvidenceCheck& e, const std::vector<std::string>& families, const std::string& archs) {
  for (const auto& f : families) {
    auto cc = parse_arch(f);
    if (!cc) throw InputError("--require-gpu: expected sm_XY (e.g. sm_90), found '" + f + "'");
    auto it = std::find_if(e.all.begin(), e.all.end(), [&](const auto& x) { return has_device(x, *cc); });
    if (it == e.all.end()) return "no smoke attestation from an " + f + " device (--require-gpu " + f + ")";
    if (std::string gap = hardware_gap(*it, archs); !gap.empty()) return "on " + f + ": " + gap;
  }
  return "";
}

}  // namespace

HardwareJudgement judge_hardware(image::Repository& repo, const std::string& digest, EVP_PKEY& key,
                                 const std::string& variant, const std::string& archs,
                                 const std::vector<std::string>& require_gpu) {
  HardwareJudgement j{check_evidence(repo, digest, key), variant == "gpu", archs, ""};
  if (!j.gpu) return j;
  const EvidenceCheck& c = j.check;
  if (!c.ok)
    j.gap = c.found ? "a smoke attestation that does not hold: " + c.why
                    : "no smoke attestation: nothing says whether the image was ever run on a GPU";
  else if (j.gap = hardware_gap(*c.evidence, archs); j.gap.empty())
    j.gap = family_gap(c, require_gpu, archs);
  return j;
}

CheckResult evidence_row(const HardwareJudgement& j, bool required, const std::string& override_note) {
  const EvidenceCheck& c = j.check;
  std::string expected =
      j.gpu ? "a signed smoke attestation from a GPU (host: hardware, verdict pass)" : "a signed smoke attestation";
  if (c.found && !c.ok)
    return row(Status::kFail, expected, "a smoke attestation that does not hold: " + c.why,
               "re-attest it with the release key, or smoke the image again");
  if (!j.gpu && !c.ok)
    return row(Status::kWarn, expected, "no smoke attestation: nothing says whether the image was ever run",
               "publish it with imgtool nightly");
  if (j.holds()) return row(Status::kPass, expected, c.evidence->summary(), "");
  std::string found = j.gap;
  if (!override_note.empty()) found += "; " + override_note;
  Status s = required ? Status::kFail : Status::kWarn;
  std::string fix = kGetHardware;
  if (s == Status::kFail) fix += "; or judge it with --allow-without-gpu-smoke (the policy without hardware evidence)";
  return row(s, expected, found, fix);
}

}  // namespace imgtool::verify
