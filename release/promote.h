// Promotion: a tag moves onto a digest that is already published -- never a rebuild.
//
//   PromoteResult r = promote(staging, &release_repo, {.digest = d, .tag = "3.3.1-cpu", .public_key = pub, …});
//
// Within one repository (`to` null):
//   1. the digest's manifest, read once; its signature by `public_key` (`identity`, default the
//      repository, any tag); the SBOM attestation by the same key (unless !require_sbom); for a
//      gpu-labelled image the hardware evidence (a smoke attestation by the same key saying a real
//      GPU ran it and it passed) unless allow_without_gpu_smoke; the release gate
//      (verify/release_gate.h: the claims read against the NEW tag; an index through its
//      linux/amd64 image) unless !verify_contents;
//   2. with `sign_key`: the digest is signed for REPO:TAG (with the override annotation, when one
//      was used) and -- so `verify --key <its public half>` holds on every row -- the SBOM and smoke
//      statements checked in 1 are attested again with it;
//   3. the tag moves.
// Across repositories (`to` given; sign_key required):
//   1. as above, in `from`;
//   2. the image is copied into `to` by digest (the copy engine: blobs mounted on one registry,
//      uploaded otherwise); the stored bytes must hash to the digest;
//   3. the SBOM statement checked in `from` is attested in `to` (subject `to`) with sign_key and
//      re-checked; 4. the digest is signed for to:TAG and re-checked; 5. the tag moves in `to`.
// A failure anywhere leaves the tag where it was (what was copied by digest is harmless).
#pragma once
#include <openssl/types.h>

#include <string>

#include "image/copy.h"
#include "image/repository.h"
#include "matrix/kb.h"
#include "sign/check_signature.h"

namespace imgtool::release {

struct PromoteRequest {
  std::string digest;              // "sha256:<hex>" in `from`
  std::string tag;                 // the tag to move (in `to` when given)
  EVP_PKEY* public_key = nullptr;  // required: what the digest must be signed (and attested) with
  std::string identity;            // required signed identity in `from`; "" = from.name() (any tag)
  EVP_PKEY* sign_key = nullptr;    // within: optional re-sign; across: required
  bool verify_contents = true;     // the release gate on the new tag
  bool require_sbom = true;        // the signed SPDX attestation must be there
  // A gpu-labelled image needs a smoke attestation from a real GPU (smoke/evidence.h: host hardware,
  // verdict pass) that verifies with public_key; this lets it through without one, and the
  // promoted signature (sign_key: required then) carries the override as an annotation.
  bool allow_without_gpu_smoke = false;
  // Compute capabilities ("sm_80", "sm_90") each of which needs its own bound hardware pass: the newest
  // attestation from a device of that capability must be one. Empty: the newest attestation alone.
  std::vector<std::string> require_gpu;
  const matrix::KnowledgeBase* kb = nullptr;  // required when verify_contents
};

struct PromoteResult {
  sign::SignatureCheck signature;  // the digest's signature in `from`
  std::string previous_digest;     // where the tag pointed before ("" if nowhere)
  bool resigned = false;           // signed (and attested) with sign_key
  std::string evidence;            // the hardware evidence's summary, or the override note
  image::CopyResult copied;        // across: the copy by digest
};

// InputError for a bad request; CheckFailed (tag untouched) when the digest is unknown, unsigned,
// unattested, or the gate fails.
PromoteResult promote(image::Repository& from, image::Repository* to, const PromoteRequest& req);

}  // namespace imgtool::release
