// Signing one manifest digest in a repository, cosign-compatible: appends a
// signature layer to the `sha256-<hex>.sig` manifest (earlier layers are
// kept), uploads the payload and config blobs first, then the manifest.
//
// Idempotent: if the .sig manifest already holds a layer with the same
// payload that verifies with this key, nothing is written.
// Two signers on one digest keep both signatures: registries have no
// compare-and-swap, so after its PUT a signer re-reads the .sig manifest and,
// if a concurrent PUT dropped its layer, appends it again to what is there;
// it looks once more after a settle delay (150 ms) longer than a rival's
// read-sign-write span (a few tries, then an Error saying a retry helps).
#pragma once
#include <openssl/types.h>

#include <map>
#include <string>

#include "image/repository.h"

namespace imgtool::sign {

struct SignRequest {
  std::string manifest_digest;                     // "sha256:<hex>" of the image manifest
  std::string identity;                            // docker-reference: "REGISTRY/REPO:TAG" (or "REGISTRY/REPO")
  std::map<std::string, std::string> annotations;  // payload "optional"; empty -> null
};

struct SignResult {
  std::string signature_tag;     // "sha256-<hex>.sig"
  std::string signature_digest;  // digest of the .sig manifest now stored
  bool already_signed = false;   // true: an equal signature was there, nothing written
  size_t layers = 0;             // signature layers in the .sig manifest
};

SignResult sign_digest(image::Repository& repo, EVP_PKEY& private_key, const SignRequest& req);

}  // namespace imgtool::sign
