// The cosign signature manifest stored under tag `sha256-<hex>.sig` in the
// signed image's repository (SIGNATURE_SPEC.md):
//   OCI image manifest; config = an empty OCI image config whose
//   rootfs.diff_ids lists the payload digests; one layer per signature, media
//   type application/vnd.dev.cosign.simplesigning.v1+json, blob = payload,
//   annotation dev.cosignproject.cosign/signature = base64(DER signature).
#pragma once
#include <string>
#include <vector>

#include "image/image.h"

namespace imgtool::sign {

inline constexpr const char* kSimpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json";
inline constexpr const char* kSignatureAnnotation = "dev.cosignproject.cosign/signature";

// "sha256:<hex>" -> "sha256-<hex>.sig". InputError for a non-sha256 digest.
std::string signature_tag(const std::string& manifest_digest);

// One signature layer: the payload bytes and its descriptor (with annotation).
struct SignatureLayer {
  image::Descriptor descriptor;
  std::string payload;
  std::string signature_b64() const;  // "" if the annotation is missing
};
SignatureLayer make_signature_layer(const std::string& payload, const std::string& signature_b64);

struct SignatureManifest {
  image::Manifest manifest;
  image::Descriptor config_descriptor;
  std::string config;  // the config blob bytes
};
// Builds the manifest (and its config) holding `layers` in order.
SignatureManifest build_signature_manifest(const std::vector<image::Descriptor>& layers);

}  // namespace imgtool::sign
