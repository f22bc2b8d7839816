// Promotion: a tag moves onto a digest that is already published -- never a rebuild.
//
//   PromoteResult r = promote(staging, &release_repo, {.digest = d, .tag = "3.3.1-cpu", .public_key = pub, …});
//
// Within one repository (`to` null):
//   1. the digest's manifest, read once; its signature by `public_key` (`identity`, default the
//      repository, any tag); the SBOM attestation by the same key (unless !require_sbom); the release
//      gate (verify/release_gate.h: the claims read against the NEW tag; an index through its
//      linux/amd64 image) unless !verify_contents;
//   2. with `sign_key`: the digest is signed for REPO:TAG and -- so `verify --key <its public half>`
//      holds on every row -- the SBOM statement checked in 1 is attested again with it;
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
  std::string digest;                         // "sha256:<hex>" in `from`
  std::string tag;                            // the tag to move (in `to` when given)
  EVP_PKEY* public_key = nullptr;             // required: what the digest must be signed (and attested) with
  std::string identity;                       // required signed identity in `from`; "" = from.name() (any tag)
  EVP_PKEY* sign_key = nullptr;               // within: optional re-sign; across: required
  bool verify_contents = true;                // the release gate on the new tag
  bool require_sbom = true;                   // the signed SPDX attestation must be there
  const matrix::KnowledgeBase* kb = nullptr;  // required when verify_contents
};

struct PromoteResult {
  sign::SignatureCheck signature;  // the digest's signature in `from`
  std::string previous_digest;     // where the tag pointed before ("" if nowhere)
  bool resigned = false;           // signed (and attested) with sign_key
  image::CopyResult copied;        // across: the copy by digest
};

// InputError for a bad request; CheckFailed (tag untouched) when the digest is unknown, unsigned,
// unattested, or the gate fails.
PromoteResult promote(image::Repository& from, image::Repository* to, const PromoteRequest& req);

}  // namespace imgtool::release
