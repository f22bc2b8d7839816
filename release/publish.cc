#include "release/publish.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "core/hash.h"
#include "image/copy.h"
#include "sbom/publish.h"
#include "sign/attestation.h"
#include "sign/check_signature.h"
#include "sign/sign_image.h"

namespace imgtool::release {

// The OCI distribution spec's tag grammar, [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}, in plain string code.
void require_tag(const std::string& tag) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  bool ok = !tag.empty() && tag.size() <= 128 && word(tag[0]) &&
            std::all_of(tag.begin(), tag.end(), [&](char c) { return word(c) || c == '.' || c == '-'; });
  if (!ok)
    throw InputError("tag: expected a tag name like 3.1.0-gpu-cuda12.6 ([A-Za-z0-9_][A-Za-z0-9._-]{0,127}), found '" +
                     tag + "'");
}

image::Manifest stored_manifest(image::Repository& repo, const std::string& digest) {
  auto m = repo.manifest(digest);
  if (!m)
    throw CheckFailed(repo.name() + "@" + digest +
                      ": expected the manifest in the repository, "
                      "found none; push it by digest first");
  if (m->digest() != digest)
    throw CheckFailed(repo.name() + "@" + digest + ": expected the manifest bytes to hash to that digest, found " +
                      m->digest() + " (tampered or corrupted answer; tag not moved)");
  return *m;
}

namespace {

// 1. The image by digest; the stored config must be the one that passed.
image::Manifest push_by_digest(image::Repository& repo, const PublishRequest& req, PublishResult& out) {
  auto dst = repo.destination();
  image::CopyResult copied = image::copy_image(*req.image, *dst, "");
  out.bytes_uploaded = copied.bytes_copied;
  image::Manifest m = stored_manifest(repo, copied.digest);
  if (!req.image_id.empty() && m.config().digest != req.image_id)
    throw CheckFailed("publish " + req.tag + ": refusing to sign: the pushed config digest " + m.config().digest +
                      " is not the image that passed, " + req.image_id);
  out.layers = m.layers();
  return m;
}

// 2. Signed, and the signature re-checked.
void sign_checked(image::Repository& repo, EVP_PKEY& key, const image::Manifest& m, const PublishRequest& req,
                  PublishResult& out) {
  std::string identity = req.identity.empty() ? repo.name() + ":" + req.tag : req.identity;
  sign::SignResult s = sign::sign_digest(repo, key, {m.digest(), identity, req.annotations});
  sign::SignatureCheck c = sign::check_signature(repo, m.digest(), key, identity);
  if (!c.ok)
    throw CheckFailed(repo.name() + "@" + m.digest() + ": expected the new signature to verify, found " + c.summary() +
                      "; another signer may have rewritten " + s.signature_tag + " — re-run");
  out.signature_tag = s.signature_tag;
  out.already_signed = s.already_signed;
}

// 3. The SBOM from the gate's inventory (only the config is read, from the repository), else from
// the local image's layers.
void attest_sbom(image::Repository& repo, EVP_PKEY& key, const image::Manifest& m, const PublishRequest& req,
                 PublishResult& out) {
  sbom::Document doc = req.inventory
                           ? sbom::sbom_of(*req.inventory, *repo.source(m.digest()), m, repo.name(), m.digest())
                           : sbom::sbom_of(*req.image, m, repo.name(), m.digest());
  sign::attach_attestation(repo, key, {m.digest(), repo.name(), sign::kSpdxPredicateType, doc.to_json()});
  out.packages = sbom::package_versions(doc);
}

}  // namespace

PublishResult publish(image::Repository& repo, EVP_PKEY& key, const PublishRequest& req) {
  if (!req.image) throw InputError("publish: expected the image to publish, found none");
  require_tag(req.tag);
  PublishResult out;
  image::Manifest m = push_by_digest(repo, req, out);
  out.digest = m.digest();
  sign_checked(repo, key, m, req, out);
  if (req.attest_sbom) attest_sbom(repo, key, m, req, out);
  if (req.evidence)  // 4. how it was smoked
    sign::attach_attestation(repo, key,
                             {m.digest(), repo.name(), smoke::kSmokePredicateType,
                              smoke::to_predicate(smoke::stamped(*req.evidence, m.config().digest))});
  repo.put_manifest(m, req.tag);  // 5. tag last
  return out;
}

}  // namespace imgtool::release
