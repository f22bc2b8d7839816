// `imgtool verify` without a GPU: signature + claims vs contents.
//
//   Report r = verify_static(inputs, options);
//
// Order: the manifest is read ONCE (a tag is resolved by that one read); the
// signature is checked against the digest of exactly those bytes; the config
// and every layer are read by digest from that manifest; the layers are
// streamed (never written to disk) through ContentsTree; claims are checked
// against the facts. An image whose signature failed is not scanned at all
// (hostile layers are only parsed once the key vouches for them). A failure to read the image is a "read" row (fail),
// not an exception, so the report still renders; bad options throw InputError.
//
// The claims scan is the only read of the layers: given `inventory`, the same scan also gathers the
// SBOM inventory (sbom/inventory.h), so verify's SBOM rows and the nightly's attestation decode no
// layer a second time. verify_image.h puts this together with the SBOM and smoke parts.
#pragma once
#include <openssl/types.h>

#include <string>

#include "image/image.h"
#include "image/repository.h"
#include "matrix/kb.h"
#include "sbom/inventory.h"
#include "sign/policy.h"
#include "verify/report_model.h"

namespace imgtool::verify {

struct StaticInputs {
  std::string ref;                          // as the user wrote it (for messages, smoke)
  image::ImageSource* source = nullptr;     // required
  image::Repository* signatures = nullptr;  // where sha256-<hex>.sig lives (nullptr: none)
  std::string signed_digest;                // if set, the manifest read must have this digest, else a read row fails
  std::string tag;                          // tag the image was referenced by ("" if by digest)
  std::string index_digest;                 // the tag named an index and `source` is its linux/amd64 image
                                            // (image/platform.h): a signature on the index holds too
};

struct VerifyOptions {
  EVP_PKEY* public_key = nullptr;  // nullptr: the signature row fails ("no key given")
  std::string key_name;            // for messages (the file name)
  bool signature = true;           // check the signature
  // The trust policy (sign/policy.h): the identity the signature must name (a tag needs exactly
  // REGISTRY/REPO:TAG by default, a digest REGISTRY/REPO) and `contents`: check claims vs contents
  // (streams the layers).
  sign::Policy policy;
  const matrix::KnowledgeBase* kb = nullptr;  // driver floors for the claims; required when policy.contents
};

// How the claims scan read the layers: scanned from the source's save stream as it was read
// (scan/stream_scans.h), or read from the source (a registry, a layout, the layer cache).
struct LayerReads {
  size_t as_saved = 0;
  size_t from_source = 0;
};

struct StaticResult {
  Report report;
  LayerReads layer_reads;
  image::Manifest manifest;                  // the one read (empty when it could not be read)
  std::optional<sbom::Inventory> inventory;  // from the claims scan, when asked for and scanned
};

// `gather_inventory`: the claims scan also gathers the SBOM inventory (left empty when the layers
// were not scanned: no claims check, a failed signature, an unreadable image).
StaticResult check_static(const StaticInputs& in, const VerifyOptions& opt, bool gather_inventory = false);
inline Report verify_static(const StaticInputs& in, const VerifyOptions& opt) { return check_static(in, opt).report; }

}  // namespace imgtool::verify
