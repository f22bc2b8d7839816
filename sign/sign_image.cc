#include "sign/sign_image.h"

#include "core/error.h"
#include "core/hash.h"
#include "sign/ecdsa.h"
#include "sign/payload.h"
#include "sign/sig_manifest.h"

namespace imgtool::sign {

namespace {

std::vector<image::Descriptor> existing_layers(Repository& repo, const std::string& tag) {
  auto m = repo.manifest(tag);
  if (!m) return {};
  std::vector<image::Descriptor> keep;
  for (const auto& l : m->layers())
    if (l.media_type == kSimpleSigningMediaType) keep.push_back(l);
  return keep;
}

bool has_equal_signature(Repository& repo, const std::vector<image::Descriptor>& layers,
                         const std::string& payload, EVP_PKEY& key) {
  std::string digest = sha256_digest(payload);
  for (const auto& l : layers) {
    if (l.digest != digest) continue;
    auto it = l.annotations.find(kSignatureAnnotation);
    auto der = it == l.annotations.end() ? std::nullopt : base64_decode(it->second);
    if (der && verify_der(key, payload, *der)) return true;
  }
  return false;
}

}  // namespace

SignResult sign_digest(Repository& repo, EVP_PKEY& key, const SignRequest& req) {
  if (req.identity.empty()) throw InputError("sign: expected an identity REGISTRY/REPO:TAG, found none");
  Payload p{req.identity, req.manifest_digest, req.annotations};
  std::string payload = p.serialize();
  SignResult r;
  r.signature_tag = signature_tag(req.manifest_digest);
  auto layers = existing_layers(repo, r.signature_tag);
  if (has_equal_signature(repo, layers, payload, key)) {
    r.already_signed = true;
    r.layers = layers.size();
    r.signature_digest = repo.manifest(r.signature_tag)->digest();
    return r;
  }
  SignatureLayer layer = make_signature_layer(payload, base64_encode(sign_der(key, payload)));
  layers.push_back(layer.descriptor);
  SignatureManifest sm = build_signature_manifest(layers);
  if (!repo.has_blob(layer.descriptor)) repo.put_blob(layer.descriptor, payload);
  if (!repo.has_blob(sm.config_descriptor)) repo.put_blob(sm.config_descriptor, sm.config);
  repo.put_manifest(sm.manifest, r.signature_tag);
  r.signature_digest = sm.manifest.digest();
  r.layers = layers.size();
  return r;
}

}  // namespace imgtool::sign
