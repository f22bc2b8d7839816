// `imgtool verify` without a GPU: signature + claims vs contents.
//
//   Report r = verify_static(inputs, options);
//
// Order: the manifest is read ONCE (a tag is resolved by that one read); the
// signature is checked against the digest of exactly those bytes; the config
// and every layer are read by digest from that manifest; the layers are
// streamed (never written to disk) through ContentsTree; claims are checked
// against the facts. An image whose signature failed is not scanned at all
// (hostile layers are only parsed once the key vouches for them). A failure to read the image is a "read" row (fail), not an exception,
// so the report still renders; bad options throw InputError.
//
// GPU smoke hook: the smoke area runs after the static checks and appends its
// rows to the same Report. verify_static() calls options.smoke if set.
#pragma once
#include <openssl/types.h>

#include <functional>
#include <string>

#include "image/image.h"
#include "matrix/kb.h"
#include "sign/repository.h"
#include "verify/contents_tree.h"
#include "verify/report_model.h"

namespace imgtool::verify {

// Called with the image reference as given, its manifest, and the report so far.
using SmokeHook = std::function<void(const std::string& ref, const image::Manifest& m, Report& report)>;

struct StaticInputs {
  std::string ref;                          // as the user wrote it (for messages, smoke)
  image::ImageSource* source = nullptr;     // required
  sign::Repository* signatures = nullptr;   // where sha256-<hex>.sig lives (nullptr: none)
  std::string signed_digest;                // if set, the manifest read must have this digest, else a read row fails
  std::string tag;                          // tag the image was referenced by ("" if by digest)
  std::string index_digest;                 // the tag named an index and `source` is its linux/amd64 image
                                            // (image/platform.h): a signature on the index holds too
};

struct VerifyOptions {
  EVP_PKEY* public_key = nullptr;  // nullptr: the signature row fails ("no key given")
  std::string key_name;            // for messages (the file name)
  // Required docker-reference; "" = sign::required_identity of the reference: a tag needs
  // exactly REGISTRY/REPO:TAG, a digest REGISTRY/REPO (any tag or digest of it).
  std::string identity;
  bool signature = true;           // check the signature
  bool claims = true;              // check claims vs contents (streams the layers)
  SmokeHook smoke;                 // GPU part; empty: none (--no-smoke)
  const matrix::KnowledgeBase* kb = nullptr;  // driver floors for the claims; required when claims
  // The claims scan is the only read of the layers: `keep_also` names more file
  // bytes to keep in it, and `on_contents` sees the merged tree (cmd_verify: the
  // SBOM rows' inventory, so the layers are not decoded a second time).
  ContentsTree::KeepContent keep_also;
  std::function<void(const ContentsTree&)> on_contents;
  // With `identity` empty and a tag reference: accept a signature made for any tag of the
  // repository (REGISTRY/REPO), the rule before exact identities (--any-tag-of-repository).
  bool any_tag_of_repository = false;
};

Report verify_static(const StaticInputs& in, const VerifyOptions& opt);

}  // namespace imgtool::verify
