#include "verify/evidence_check.h"

#include "core/error.h"
#include "sign/attestation.h"

namespace imgtool::verify {

EvidenceCheck check_evidence(image::Repository& repo, const std::string& digest, EVP_PKEY& key) {
  EvidenceCheck c;
  sign::AttestationCheck a = sign::check_attestation(repo, digest, key, smoke::kSmokePredicateType);
  c.found = a.found;
  if (!a.ok) {
    c.why = a.summary();
    return c;
  }
  try {
    c.evidence = smoke::from_predicate(a.statement.predicate);
    c.ok = true;
  } catch (const CheckFailed& e) {
    c.why = e.what();
  }
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

CheckResult evidence_row(const EvidenceCheck& c, const std::string& variant, bool require,
                         const std::string& override_note) {
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
  if (!gpu || e.hardware_pass()) return row(Status::kPass, expected, e.summary(), "");
  std::string found = e.summary();
  if (!override_note.empty()) found += "; " + override_note;
  return row(require ? Status::kFail : Status::kWarn, expected, found, kGetHardware);
}

}  // namespace imgtool::verify
