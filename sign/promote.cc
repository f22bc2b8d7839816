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
image::Manifest stored_manifest(image::Repository& repo, const std::string& digest) {
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

PublishResult publish_signed(image::Repository& repo, const std::function<image::Manifest()>& push_by_digest,
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

namespace {

// Step 1 of promote() and promote_across(): the digest's manifest (read once), its signature, the
// required attestation and the gate, all in `repo`. CheckFailed naming what is missing.
image::Manifest checked_for_promotion(image::Repository& repo, EVP_PKEY& public_key, const std::string& digest,
                                      const std::string& tag, const std::string& identity,
                                      const std::string& require_attestation, const PromoteGate& gate,
                                      PromoteResult& r, Statement* attested = nullptr) {
  require_tag(tag);
  if (!is_sha256_digest(digest))
    throw InputError("promote: expected an image reference by digest (…@sha256:<hex>), found '" + digest + "'");
  image::Manifest m = stored_manifest(repo, digest);
  r.signature = check_signature(repo, digest, public_key, identity.empty() ? repo.name() : identity);
  if (!r.signature.ok)
    throw CheckFailed(repo.name() + "@" + digest + ": expected a valid signature by the given key "
                      "before moving tag " + tag + ", found " + r.signature.summary() +
                      "; sign it with `imgtool sign` (tag not moved)");
  if (!require_attestation.empty()) {
    AttestationCheck a = check_attestation(repo, digest, public_key, require_attestation);
    if (!a.ok)
      throw CheckFailed(repo.name() + "@" + digest + ": expected an attestation (" + require_attestation +
                        ") by the given key before moving tag " + tag + ", found " + a.summary() +
                        "; attach it with `imgtool sign` (tag not moved)");
    if (attested) *attested = a.statement;
  }
  if (gate) gate(m);
  return m;
}

}  // namespace

PromoteResult promote(image::Repository& repo, EVP_PKEY& public_key, const PromoteRequest& req) {
  PromoteResult r;
  image::Manifest m = checked_for_promotion(repo, public_key, req.digest, req.tag, req.identity,
                                            req.require_attestation, req.gate, r);
  if (auto prev = repo.manifest(req.tag)) r.previous_digest = prev->digest();
  if (req.resign_key) sign_digest(repo, *req.resign_key, {req.digest, repo.name() + ":" + req.tag, {}});
  repo.put_manifest(m, req.tag);
  return r;
}

PromoteResult promote_across(image::Repository& from, image::Repository& to, EVP_PKEY& public_key, EVP_PKEY& sign_key,
                             const CrossPromoteRequest& req) {
  PromoteResult r;
  Statement attested;
  checked_for_promotion(from, public_key, req.digest, req.tag, req.identity, req.require_attestation, req.gate, r,
                        &attested);
  if (!req.copy_by_digest) throw InputError("promote: a promotion across repositories needs a copy step");
  req.copy_by_digest();                                                   // 2. the image, by digest
  image::Manifest m = stored_manifest(to, req.digest);
  if (!req.require_attestation.empty()) {  // 3. the statement checked in `from`, attested for `to` by the release signer
    attach_attestation(to, sign_key, {req.digest, to.name(), req.require_attestation, attested.predicate});
    AttestationCheck a = check_attestation(to, req.digest, sign_key, req.require_attestation);
    if (!a.ok)
      throw CheckFailed(to.name() + "@" + req.digest + ": expected the new attestation to verify, found " + a.summary() +
                        " (tag not moved)");
  }
  std::string identity = to.name() + ":" + req.tag;                     // 4. signed for the release
  SignResult s = sign_digest(to, sign_key, {req.digest, identity, {}});
  SignatureCheck c = check_signature(to, req.digest, sign_key, identity);
  if (!c.ok)
    throw CheckFailed(to.name() + "@" + req.digest + ": expected the new signature to verify, found " + c.summary() +
                      "; another signer may have rewritten " + s.signature_tag + " — re-run (tag not moved)");
  if (auto prev = to.manifest(req.tag)) r.previous_digest = prev->digest();
  to.put_manifest(m, req.tag);                                            // 5. tag last
  return r;
}

}  // namespace imgtool::sign
