// The hardware evidence of one digest (smoke/evidence.h): its smoke attestation, checked as the SBOM's
// is (sign::check_attestation: DSSE signature by the key, subject = the digest, newest valid layer),
// and the `smoke.evidence` row of `imgtool verify`.
//
//   smoke.evidence  pass  an attestation verifies and says how the image was smoked ("hardware, 1×
//                         NVIDIA H100 80GB HBM3, driver 580.x, 2026-11-26"); for a cpu image any host
//                   warn  none attached, or a gpu image whose GPU part never ran on hardware
//                         ("test-double …", "none …"), or promoted past that with
//                         --allow-without-gpu-smoke (the override is on the signature and shown)
//                   fail  an attestation is there but none verifies (forged, other key, other
//                         subject, not a smoke predicate), or -- with require_gpu_smoke -- a gpu image
//                         without a passing hardware smoke
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

// `variant` = the image's io.imgtool.variant, `archs` its io.imgtool.cuda-archs; `override_note` =
// the signature's kGpuSmokeOverride annotation ("" when none).
CheckResult evidence_row(const EvidenceCheck& c, const std::string& variant, bool require_gpu_smoke,
                         const std::string& override_note, const std::string& archs = "");

}  // namespace imgtool::verify
