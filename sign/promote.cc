#include "sign/promote.h"

#include <openssl/evp.h>

#include "core/error.h"
#include "core/hash.h"
#include "sign/attestation.h"
#include "sign/sign_image.h"

namespace imgtool::sign {

namespace {

void require_tag(const std::string& tag) {
  if (tag.empty() || is_sha256_digest(tag) || tag.find_first_of("/@ ") != std::string::npos)
    throw InputError("tag: expected a tag name like 3.1.0-gpu-cuda12.6, found '" + tag + "'");
}

// The manifest stored under `digest`, read once; everything after (signature,
// gate, the tag PUT) uses these bytes, so they must hash to `digest` whatever
// the repository implementation checks.
image::Manifest stored_manifest(Repository& repo, const std::string& digest) {
  auto m = repo.manifest(digest);
  if (!m)
    throw CheckFailed(repo.name() + "@" + digest + ": expected the manifest in the repository, "
                      "found none; push it by digest first");
  if (m->digest() != digest)
    throw CheckFailed(repo.name() + "@" + digest + ": expected the manifest bytes to hash to that digest, found " +
                      m->digest() + " (tampered or corrupted answer; tag not moved)");
  return *m;
}

}  // namespace

PublishResult publish_signed(Repository& repo, const std::function<image::Manifest()>& push_by_digest,
                             EVP_PKEY& key, const PublishRequest& req) {
  require_tag(req.tag);
  image::Manifest pushed = push_by_digest();                    // 1. content by digest
  image::Manifest m = stored_manifest(repo, pushed.digest());
  std::string identity = req.identity.empty() ? repo.name() + ":" + req.tag : req.identity;
  SignResult s = sign_digest(repo, key, {m.digest(), identity, req.annotations});  // 2. sign
  SignatureCheck c = check_signature(repo, m.digest(), key, identity);
  if (!c.ok)
    throw CheckFailed(repo.name() + "@" + m.digest() + ": expected the new signature to verify, found " +
                      c.summary() + "; another signer may have rewritten " + s.signature_tag + " — re-run");
  if (req.attach) req.attach(m);                                // 2b. e.g. the SBOM attestation
  if (req.gate) req.gate(m);
  repo.put_manifest(m, req.tag);                                // 3. tag last
  return {m.digest(), s.signature_tag, s.already_signed};
}

PromoteResult promote(Repository& repo, EVP_PKEY& public_key, const PromoteRequest& req) {
  require_tag(req.tag);
  if (!is_sha256_digest(req.digest))
    throw InputError("promote: expected an image reference by digest (…@sha256:<hex>), found '" + req.digest + "'");
  image::Manifest m = stored_manifest(repo, req.digest);
  PromoteResult r;
  std::string identity = req.identity.empty() ? repo.name() : req.identity;
  r.signature = check_signature(repo, req.digest, public_key, identity);
  if (!r.signature.ok)
    throw CheckFailed(repo.name() + "@" + req.digest + ": expected a valid signature by the given key "
                      "before moving tag " + req.tag + ", found " + r.signature.summary() +
                      "; sign it with `imgtool sign` (tag not moved)");
  if (!req.require_attestation.empty()) {
    AttestationCheck a = check_attestation(repo, req.digest, public_key, req.require_attestation);
    if (!a.ok)
      throw CheckFailed(repo.name() + "@" + req.digest + ": expected an attestation (" + req.require_attestation +
                        ") by the given key before moving tag " + req.tag + ", found " + a.summary() +
                        "; attach it with `imgtool sign` (tag not moved)");
  }
  if (req.gate) req.gate(m);
  if (auto prev = repo.manifest(req.tag)) r.previous_digest = prev->digest();
  if (req.resign_key) sign_digest(repo, *req.resign_key, {req.digest, repo.name() + ":" + req.tag, {}});
  repo.put_manifest(m, req.tag);
  return r;
}

}  // namespace imgtool::sign
