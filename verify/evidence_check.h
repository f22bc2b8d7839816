// The hardware evidence of one digest (smoke/evidence.h): its smoke attestation, checked as the SBOM's
// is (sign::check_attestation: DSSE signature by the key, subject = the digest, newest valid layer),
// and the `smoke.evidence` row of `imgtool verify`.
//
//   smoke.evidence  pass  an attestation verifies and says how the image was smoked ("hardware, 1×
//                         NVIDIA H100 80GB HBM3, driver 580.x, 2026-11-26"); for a cpu image any host
//                   warn  a cpu image with none attached; a gpu image whose GPU part never ran on
//                         hardware ("test-double …", "none …") judged under a policy without hardware
//                         evidence (--allow-without-gpu-smoke; a promote override on the signature is shown)
//                   fail  an attestation is there but none verifies (forged, other key, other
//                         subject, not a smoke predicate), or -- under a policy that requires hardware
//                         evidence (the default) -- a gpu image without a passing hardware smoke
#pragma once
#include <openssl/types.h>

#include <optional>
#include <string>

#include "image/repository.h"
#include "smoke/evidence.h"
#include "verify/report_model.h"

namespace imgtool::verify {

// The annotation `promote --allow-without-gpu-smoke` writes into the signature of the promoted tag.
inline constexpr const char* kGpuSmokeOverride = "io.imgtool.gpu-smoke";

struct EvidenceCheck {
  bool found = false;                            // a `.att` layer of the smoke predicate type exists
  bool ok = false;                               // one verifies with the key and names the digest
  std::optional<smoke::SmokeEvidence> evidence;  // the newest by its signed `attested` time, pass or fail
  size_t considered = 0;                         // valid attestations it was chosen among
  std::vector<smoke::SmokeEvidence> all;         // every valid one, newest first
  std::string why;                               // when !ok: what was found instead
};

EvidenceCheck check_evidence(image::Repository& repo, const std::string& digest, EVP_PKEY& public_key);

// "" when `e` is a bound hardware pass on devices code compiled for `archs` (io.imgtool.cuda-archs;
// "" = unknown, not held against) runs on; else what it lacks, for a message. Promote and verify
// hold evidence to this one rule: an H100 run of an image with no sm_90 code vouches for nothing.
std::string hardware_gap(const smoke::SmokeEvidence& e, const std::string& archs);

// The hardware part of the trust policy (sign/policy.h) for one digest: whether a gpu image's
// newest valid smoke attestation is a bound hardware pass on devices its code runs on, and, per
// `require_gpu` capability, whether the newest one from a device of it is. verify's row, promote's
// refusal and select's filter all read this one judgement.
struct HardwareJudgement {
  EvidenceCheck check;
  bool gpu = false;   // io.imgtool.variant == gpu
  std::string archs;  // io.imgtool.cuda-archs
  std::string gap;    // "" when it holds (always for a cpu image); else what was found instead
  bool holds() const { return gap.empty(); }
};

// `variant`, `archs`: the image's io.imgtool.variant and io.imgtool.cuda-archs labels. InputError
// for a `require_gpu` entry that is no compute capability.
HardwareJudgement judge_hardware(image::Repository& repo, const std::string& digest, EVP_PKEY& public_key,
                                 const std::string& variant, const std::string& archs,
                                 const std::vector<std::string>& require_gpu = {});

// The smoke.evidence row. `required` = the policy's hardware_evidence; `override_note` = the accepted
// signature's kGpuSmokeOverride annotation ("" when none), shown: a gpu image without hardware
// evidence fails when required, override or not (the override was the promoter's policy; the
// verifier relaxes its own with --allow-without-gpu-smoke), and warns otherwise.
CheckResult evidence_row(const HardwareJudgement& j, bool required, const std::string& override_note);

}  // namespace imgtool::verify
