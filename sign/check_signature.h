// Checking cosign signatures of one manifest digest, as `cosign verify --key`
// does plus containers/image's identity rule:
//   1. fetch `sha256-<hex>.sig` from the repository (none -> not signed);
//   2. for each simplesigning layer: fetch the payload by digest (re-hashed),
//      base64-decode the annotation, verify DER ECDSA P-256/SHA-256 with the
//      key, parse the payload strictly, require docker-manifest-digest ==
//      the digest and, if `identity` is given, docker-reference to match it;
//   3. accepted if at least one layer passes.
// Every rejected layer contributes one reason, so a failure can say why.
#pragma once
#include <openssl/types.h>

#include <map>
#include <string>
#include <vector>

#include "image/repository.h"

namespace imgtool::sign {

struct SignatureCheck {
  bool ok = false;
  std::string signature_tag;
  size_t layers = 0;              // signature layers examined
  std::string accepted_identity;  // docker-reference of the accepted layer
  std::map<std::string, std::string>
      accepted_annotations;          // its signed payload's "optional" (e.g. promote's overrides)
  std::vector<std::string> reasons;  // one per rejected layer, or why none was found
  bool other_identity = false;       // a layer verified for the digest but named another identity
  std::string summary() const;       // one line: what was found
};

// True if docker-reference `ref` satisfies `identity`: equal, or `identity`
// names the repository only ("REGISTRY/REPO") and `ref` is that repository
// with any tag or digest. An empty identity accepts any.
bool identity_matches(const std::string& ref, const std::string& identity);

// The identity a signature must name for an image referenced as `repository`
// ("REGISTRY/REPO") with `tag` ("" for a reference by digest), as containers/image's
// matchRepoDigestOrExact: a tag reference needs exactly "REGISTRY/REPO:TAG" (a signature
// made for another tag of the repository does not vouch for this one); a digest
// reference needs the repository only (cosign signs "REGISTRY/REPO" for a digest).
// `any_tag_of_repository` widens a tag reference to the repository too (opt-in:
// the trust policy's IdentityRule::any_tag_of_repository, sign/policy.h).
std::string required_identity(const std::string& repository, const std::string& tag, bool any_tag_of_repository);

SignatureCheck check_signature(image::Repository& repo, const std::string& manifest_digest, EVP_PKEY& public_key,
                               const std::string& identity);

}  // namespace imgtool::sign
