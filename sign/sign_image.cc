#include "sign/sign_image.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "core/error.h"
#include "core/hash.h"
#include "sign/ecdsa.h"
#include "sign/payload.h"
#include "sign/sig_manifest.h"

namespace imgtool::sign {

namespace {

constexpr int kSignAttempts = 8;
constexpr std::chrono::milliseconds kSettle{150};

std::vector<image::Descriptor> existing_layers(image::Repository& repo, const std::string& tag) {
  auto m = repo.manifest(tag);
  if (!m) return {};
  std::vector<image::Descriptor> keep;
  for (const auto& l : m->layers())
    if (l.media_type == kSimpleSigningMediaType) keep.push_back(l);
  return keep;
}

bool has_equal_signature(image::Repository& repo, const std::vector<image::Descriptor>& layers,
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

// Appends one signature layer to the current .sig manifest; returns its digest.
std::string append_signature(image::Repository& repo, const std::string& tag, std::vector<image::Descriptor> layers,
                             const SignatureLayer& layer) {
  layers.push_back(layer.descriptor);
  SignatureManifest sm = build_signature_manifest(layers);
  if (!repo.has_blob(layer.descriptor)) repo.put_blob(layer.descriptor, layer.payload);
  if (!repo.has_blob(sm.config_descriptor)) repo.put_blob(sm.config_descriptor, sm.config);
  repo.put_manifest(sm.manifest, tag);
  return sm.manifest.digest();
}

}  // namespace

SignResult sign_digest(image::Repository& repo, EVP_PKEY& key, const SignRequest& req) {
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
  // A registry has no compare-and-swap for a tag: a signer that read the .sig
  // manifest before our PUT and writes after it drops our layer. So re-read
  // after each write and, if ours is gone, append it to what is there now.
  for (int attempt = 1; attempt <= kSignAttempts; ++attempt) {
    append_signature(repo, r.signature_tag, layers, layer);
    layers = existing_layers(repo, r.signature_tag);
    if (has_equal_signature(repo, layers, payload, key)) {
      // Settle: a rival that read before our PUT writes within its own short
      // read-sign-write span; look once more after longer than that span.
      std::this_thread::sleep_for(kSettle);
      layers = existing_layers(repo, r.signature_tag);
      if (has_equal_signature(repo, layers, payload, key)) {
        r.signature_digest = repo.manifest(r.signature_tag)->digest();
        r.layers = layers.size();
        return r;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 * attempt + std::rand() % 50));
  }
  throw Error(repo.name() + ":" + r.signature_tag + ": expected the new signature to stay after writing it, found it " +
                  "replaced by another signer " + std::to_string(kSignAttempts) + " times; re-run",
              true);
}

}  // namespace imgtool::sign
