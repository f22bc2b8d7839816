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

CheckResult evidence_row(const EvidenceCheck& c, const std::string& variant, bool require,
                         const std::string& override_note, const std::string& archs) {
  bool gpu = variant == "gpu";
  std::string expected =
      gpu ? "a signed smoke attestation from a GPU (host: hardware, verdict pass)" : "a signed smoke attestation";
  if (c.found && !c.ok)
    return row(Status::kFail, expected, "a smoke attestation that does not hold: " + c.why,
               "re-attest it with the release key, or smoke the image again");
  if (!c.ok) {
    Status s = gpu && require ? Status::kFail : Status::kWarn;
    return row(
        s, expected,
        "no smoke attestation: nothing says whether the image was ever run" + std::string(gpu ? " on a GPU" : ""),
        gpu ? kGetHardware : "publish it with imgtool nightly");
  }
  const smoke::SmokeEvidence& e = *c.evidence;
  std::string gap = hardware_gap(e, archs);
  if (!gpu || gap.empty()) return row(Status::kPass, expected, e.summary(), "");
  std::string found = gap;
  if (!override_note.empty()) found += "; " + override_note;
  return row(require ? Status::kFail : Status::kWarn, expected, found, kGetHardware);
}

}  // namespace imgtool::verify
