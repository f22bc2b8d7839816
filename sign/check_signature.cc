#include "sign/check_signature.h"

#include "core/error.h"
#include "core/hash.h"
#include "sign/ecdsa.h"
#include "sign/payload.h"
#include "sign/sig_manifest.h"

namespace imgtool::sign {

std::string SignatureCheck::summary() const {
  if (ok) return "valid signature for identity " + accepted_identity;
  std::string s = layers == 0 ? "no signature" : std::to_string(layers) + " signature layer(s), none valid";
  for (const auto& r : reasons) s += "; " + r;
  return s;
}

bool identity_matches(const std::string& ref, const std::string& identity) {
  if (identity.empty() || ref == identity) return true;
  size_t slash = identity.rfind('/');
  bool repo_only = identity.find(':', slash == std::string::npos ? 0 : slash) == std::string::npos &&
                   identity.find('@') == std::string::npos;
  return repo_only && ref.size() > identity.size() && ref.compare(0, identity.size(), identity) == 0 &&
         (ref[identity.size()] == ':' || ref[identity.size()] == '@');
}

std::string required_identity(const std::string& repository, const std::string& tag, bool any_tag_of_repository) {
  return tag.empty() || any_tag_of_repository ? repository : repository + ":" + tag;
}

namespace {

const std::string kOtherIdentity = "signed identity is ";

// Empty string if the layer is valid; otherwise why it is not.
std::string check_layer(image::Repository& repo, const image::Descriptor& l, const std::string& digest, EVP_PKEY& key,
                        const std::string& identity, Payload& out) {
  auto it = l.annotations.find(kSignatureAnnotation);
  if (it == l.annotations.end()) return "layer " + l.digest.substr(0, 19) + " has no signature annotation";
  auto der = base64_decode(it->second);
  if (!der) return "signature annotation is not valid base64 (truncated or corrupted)";
  std::string payload;
  try {
    payload = repo.blob(l);
  } catch (const Error& e) {
    return std::string("payload blob unreadable: ") + e.what();
  }
  if (sha256_digest(payload) != l.digest) return "payload bytes do not match their digest (tampered)";
  if (!verify_der(key, payload, *der))
    return "signature does not verify with the given key (wrong key, or signature/payload tampered or truncated)";
  Payload p;
  try {
    p = parse_payload(payload);
  } catch (const CheckFailed& e) {
    return e.what();
  }
  if (p.manifest_digest != digest) return "signed payload is for digest " + p.manifest_digest + ", not " + digest;
  if (!identity_matches(p.docker_reference, identity))
    return kOtherIdentity + p.docker_reference + ", expected " + identity;
  out = p;
  return "";
}

}  // namespace

SignatureCheck check_signature(image::Repository& repo, const std::string& digest, EVP_PKEY& key,
                               const std::string& identity) {
  SignatureCheck c;
  c.signature_tag = signature_tag(digest);
  auto m = repo.manifest(c.signature_tag);
  if (!m) {
    c.reasons.push_back("no " + c.signature_tag + " in " + repo.name());
    return c;
  }
  for (const auto& l : m->layers()) {
    if (l.media_type != kSimpleSigningMediaType) continue;
    ++c.layers;
    Payload p;
    std::string why = check_layer(repo, l, digest, key, identity, p);
    if (why.empty()) {
      c.ok = true;
      c.accepted_identity = p.docker_reference;
      c.accepted_annotations = p.optional;
      c.reasons.clear();
      return c;
    }
    c.reasons.push_back(why);
    c.other_identity = c.other_identity || why.rfind(kOtherIdentity, 0) == 0;
  }
  if (c.layers == 0) c.reasons.push_back(c.signature_tag + " holds no simplesigning layers");
  return c;
}

}  // namespace imgtool::sign
