#include "sign/sig_manifest.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/hash.h"

namespace imgtool::sign {

using nlohmann::json;

std::string signature_tag(const std::string& digest) {
  if (!is_sha256_digest(digest))
    throw InputError("signature tag: expected a sha256:<hex> digest, found '" + digest + "'");
  return "sha256-" + digest.substr(7) + ".sig";
}

std::string SignatureLayer::signature_b64() const {
  auto it = descriptor.annotations.find(kSignatureAnnotation);
  return it == descriptor.annotations.end() ? "" : it->second;
}

SignatureLayer make_signature_layer(const std::string& payload, const std::string& sig_b64) {
  SignatureLayer l;
  l.payload = payload;
  l.descriptor.media_type = kSimpleSigningMediaType;
  l.descriptor.digest = sha256_digest(payload);
  l.descriptor.size = static_cast<int64_t>(payload.size());
  l.descriptor.annotations[kSignatureAnnotation] = sig_b64;
  return l;
}

namespace {
// An empty image config, as cosign writes it (verifiers do not read it).
std::string empty_config(const std::vector<image::Descriptor>& layers) {
  json diff_ids = json::array();
  for (const auto& l : layers) diff_ids.push_back(l.digest);
  json c = {{"architecture", ""},
            {"created", "0001-01-01T00:00:00Z"},
            {"history", json::array({json{{"created", "0001-01-01T00:00:00Z"}}})},
            {"os", ""},
            {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}},
            {"config", json::object()}};
  return c.dump();
}
}  // namespace

SignatureManifest build_signature_manifest(const std::vector<image::Descriptor>& layers) {
  SignatureManifest s;
  s.config = empty_config(layers);
  s.config_descriptor = {image::media::kOciConfig, sha256_digest(s.config), static_cast<int64_t>(s.config.size()), {}};
  json m = {{"schemaVersion", 2},
            {"mediaType", image::media::kOciManifest},
            {"config", s.config_descriptor},
            {"layers", layers}};
  s.manifest.raw = m.dump();
  s.manifest.media_type = image::media::kOciManifest;
  return s;
}

}  // namespace imgtool::sign
