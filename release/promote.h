// Promotion: a tag moves onto a digest that is already published -- never a rebuild.
//
//   PromoteResult r = promote(staging, &release_repo, {.digest = d, .tag = "3.3.1-cpu", .public_key = pub, …});
//
// Within one repository (`to` null):
//   1. the digest's manifest, read once; what the policy (sign/policy.h) asks of it: its signature by
//      `public_key` (default identity: the repository, any tag); the SBOM attestation by the same
//      key; for a gpu-labelled image the hardware evidence (a smoke attestation by the same key
//      saying a real GPU ran it and it passed, verify/evidence_check.h's judgement); the release
//      gate (verify/release_gate.h: the claims read against the NEW tag; an index through its
//      linux/amd64 image); without `sign_key`, a signature for exactly REPO:TAG (the exact rule);
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
#include "sign/policy.h"

namespace imgtool::release {

struct PromoteRequest {
  std::string digest;              // "sha256:<hex>" in `from`
  std::string tag;                 // the tag to move (in `to` when given)
  EVP_PKEY* public_key = nullptr;  // required: what the digest must be signed (and attested) with
  EVP_PKEY* sign_key = nullptr;    // within: optional re-sign; across: required
  // The trust policy (sign/policy.h), the one verify, select and nightly promote read. Its identity
  // for the digest (by default: REGISTRY/REPO, any tag); `sbom`: the signed SPDX attestation; for a
  // gpu-labelled image `hardware_evidence`: a smoke attestation from a real GPU (smoke/evidence.h:
  // host hardware, verdict pass, devices the code runs on, and one per `require_gpu` capability)
  // that verifies with public_key -- without it (--allow-without-gpu-smoke; sign_key required then)
  // the promoted signature carries the override as an annotation; `contents`: the release gate on
  // the new tag. With the exact identity rule and no sign_key, the digest must already be signed
  // for exactly REPO:TAG, so the moved tag passes `imgtool verify` under the same policy.
  sign::Policy policy;
  const matrix::KnowledgeBase* kb = nullptr;  // required when policy.contents
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
