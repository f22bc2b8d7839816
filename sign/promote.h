// Atomic publication: a tag only ever points at a complete, signed image.
//
// Order (each step completes before the next starts):
//   1. blobs, then the manifest, stored BY DIGEST (no tag);
//   2. the digest is signed (`sha256-<hex>.sig`), and the signature re-checked
//      with the key's public half (guards against a racing writer of .sig);
//   3. only then the manifest is PUT under the tag.
// A process killed anywhere before 3 leaves the tag where it was; killed
// during 3, the registry applies the PUT whole or not at all. Re-running is
// safe: blobs are skipped, an equal signature is not duplicated.
//
// promote() is the same step 3 for an image already in the repository: it
// moves `tag` onto `digest` only if the digest carries a valid signature by
// `public_key` for this repository (any tag of it: matchRepoDigestOrExact),
// and only if the optional `gate` (e.g. verify's static checks) passes.
#pragma once
#include <openssl/types.h>

#include <functional>
#include <map>
#include <string>

#include "image/image.h"
#include "sign/check_signature.h"
#include "image/repository.h"

namespace imgtool::sign {

// Throws CheckFailed to stop the promotion (the tag is not moved).
using PromoteGate = std::function<void(const image::Manifest&)>;

struct PublishRequest {
  std::string tag;                                 // required
  std::string identity;                            // default: repo.name() + ":" + tag
  std::map<std::string, std::string> annotations;  // signed payload "optional"
  PromoteGate gate;                                // optional, runs before the tag moves
  // optional, runs after the signature holds and before the gate and the tag
  // PUT: attaches what must exist before the tag does (the SBOM attestation,
  // sbom/publish.h); a throw leaves the tag where it was.
  std::function<void(const image::Manifest&)> attach;
};

struct PublishResult {
  std::string digest;         // manifest digest now under the tag
  std::string signature_tag;  // sha256-<hex>.sig
  bool already_signed = false;
};

// `push_by_digest` stores blobs + manifest in `repo` WITHOUT a tag (e.g. the
// copy engine with an empty tag) and returns that manifest.
PublishResult publish_signed(image::Repository& repo, const std::function<image::Manifest()>& push_by_digest,
                             EVP_PKEY& private_key, const PublishRequest& req);

struct PromoteRequest {
  std::string digest;    // "sha256:<hex>" already in repo
  std::string tag;       // the tag to move
  std::string identity;  // required signed identity; default: repo.name() (any tag)
  PromoteGate gate;
  EVP_PKEY* resign_key = nullptr;  // if set, also sign identity repo:tag before moving
  // If set, the digest must also carry an attestation of this predicate type
  // (e.g. kSpdxPredicateType, sign/attestation.h) that verifies with the key
  // and names the digest: no tag onto an image without its SBOM.
  std::string require_attestation;
};

struct PromoteResult {
  SignatureCheck signature;
  std::string previous_digest;  // where the tag pointed before ("" if nowhere)
};

// CheckFailed (tag untouched) if the digest is unknown, unsigned, or the gate fails.
PromoteResult promote(image::Repository& repo, EVP_PKEY& public_key, const PromoteRequest& req);

// A release is a promotion, never a rebuild: promote_across() moves a digest from a staging
// repository `from` into a release repository `to`. In order:
//   1. in `from`: the manifest read once, its signature by `public_key` (req.identity, default
//      from.name()), the required attestation, and the gate — as promote();
//   2. `copy_by_digest()` stores the image in `to` by digest, without a tag (the CLI and the
//      nightly use the copy engine, which mounts blobs across repositories of one registry and
//      uploads them when the registry declines the mount); the stored bytes must hash to the digest;
//   3. the attested statement checked in `from` is attested again in `to` (subject `to`, signed with
//      `sign_key`) and re-checked there;
//   4. the digest is signed in `to` for `to:TAG` with `sign_key` and the signature re-checked;
//   5. only then the tag moves in `to`.
// A failure anywhere leaves `to`'s tag where it was (what was copied by digest is harmless).
struct CrossPromoteRequest {
  std::string digest;                  // "sha256:<hex>" in `from`
  std::string tag;                     // the tag to move in `to`
  std::string identity;                // required signed identity in `from`; default from.name() (any tag)
  PromoteGate gate;
  std::string require_attestation;     // predicate type that must be attested in `from` (and is attested in `to`)
  std::function<void()> copy_by_digest;
};

PromoteResult promote_across(image::Repository& from, image::Repository& to, EVP_PKEY& public_key, EVP_PKEY& sign_key,
                             const CrossPromoteRequest& req);

}  // namespace imgtool::sign
