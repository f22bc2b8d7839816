#include "release/promote.h"

#include <openssl/evp.h>

#include <algorithm>
#include <map>
#include <optional>

#include "core/error.h"
#include "core/hash.h"
#include "image/config.h"
#include "image/platform.h"
#include "matrix/labels.h"
#include "release/publish.h"
#include "sign/attestation.h"
#include "sign/sign_image.h"
#include "smoke/evidence.h"
#include "verify/evidence_check.h"
#include "verify/release_gate.h"
#include "verify/report_render.h"

namespace imgtool::release {

namespace {

void check_request(const PromoteRequest& req, bool across) {
  require_tag(req.tag);
  if (!is_sha256_digest(req.digest))
    throw InputError("promote: expected an image reference by digest (…@sha256:<hex>), found '" + req.digest + "'");
  if (!req.public_key) throw InputError("promote: expected --key PUBLIC_KEY, found none");
  if (across && !req.sign_key)
    throw InputError(
        "promote --to: expected --sign-key KEY: the digest is signed for the release repository before its tag moves");
  if (req.policy.contents && !req.kb)
    throw InputError("promote: expected a knowledge base for the contents gate, found none");
  if (!req.policy.hardware_evidence && !req.sign_key)
    throw InputError(
        "promote --allow-without-gpu-smoke: expected --sign-key KEY: the override is recorded as an "
        "annotation of the signature promote writes");
}

// The override as the promoted signature records it (verify shows it).
const char* const kOverrideNote =
    "promoted with --allow-without-gpu-smoke: no hardware evidence was required (recorded on the signature)";

image::ImageConfig config_of(image::Repository& repo, const image::Manifest& m) {
  auto src = repo.source(image::platform_digest(m, repo.name() + "@" + m.digest()));
  return image::read_image_config(*src, src->manifest());
}

// The release gate on the image (an index: its linux/amd64 manifest), claims read against the new tag.
void contents_gate(image::Repository& repo, const image::Manifest& m, const std::string& tag,
                   const matrix::KnowledgeBase& kb) {
  std::string ref = repo.name() + "@" + m.digest();
  auto src = repo.source(image::platform_digest(m, ref));
  verify::GateResult g = verify::release_gate({.ref = ref, .source = src.get(), .tag = tag, .kb = &kb});
  if (!g.passed())
    throw CheckFailed("promote: expected the image's claims to match its contents, found failures (tag not moved):\n" +
                      verify::render_table(g.report) + "pass --no-verify-contents to promote anyway");
}

struct Checked {
  image::Manifest manifest;
  sign::Statement sbom;                          // the attested statement (when required)
  std::optional<smoke::SmokeEvidence> evidence;  // the smoke attestation that verified, if any
  bool overridden = false;                       // a gpu image let through by allow_without_gpu_smoke
};

// A gpu image: a passing hardware smoke attested with the key (verify's judgement), or the override.
void check_hardware_evidence(image::Repository& repo, const PromoteRequest& req, Checked& c, PromoteResult& r) {
  image::ImageConfig cfg = config_of(repo, c.manifest);
  verify::HardwareJudgement j = verify::judge_hardware(repo, req.digest, *req.public_key, cfg.label(labels::kVariant),
                                                       cfg.label(labels::kCudaArchs), req.policy.require_gpu);
  if (j.check.ok) c.evidence = j.check.evidence;
  if (j.holds()) {
    r.evidence = j.check.ok ? j.check.evidence->summary() : "";
    return;
  }
  if (req.policy.hardware_evidence)
    throw CheckFailed(repo.name() + "@" + req.digest +
                      ": expected hardware evidence for this gpu image (a smoke "
                      "attestation by the given key saying a real GPU ran it and it passed) before moving tag " +
                      req.tag + ", found " + j.gap +
                      "; smoke it on a GPU host (imgtool nightly there, or the "
                      "Kubernetes smoke Jobs + `imgtool nightly collect --key`), or pass --allow-without-gpu-smoke "
                      "(recorded on the signature; tag not moved)");
  c.overridden = true;
  r.evidence = std::string(kOverrideNote) + "; found " + j.gap;
}

// Without a new signature, the tag moves only if `imgtool verify REPO:TAG` will hold under the same
// policy: with the exact identity rule the digest must already be signed for exactly REPO:TAG.
void check_tag_identity(image::Repository& repo, const PromoteRequest& req) {
  if (req.sign_key) return;
  std::string exact = req.policy.required_identity(repo.name(), req.tag);
  sign::SignatureCheck s = sign::check_signature(repo, req.digest, *req.public_key, exact);
  if (!s.ok)
    throw CheckFailed(repo.name() + "@" + req.digest + ": expected a signature by the given key for " + exact +
                      " (the policy's identity for the moved tag, which `imgtool verify` will require), found " +
                      s.summary() +
                      "; pass --sign-key KEY to sign it for the tag, or --any-tag-of-repository (tag not moved)");
}

// Step 1: the manifest (read once), its signature, the SBOM attestation and the gate, in `repo`.
Checked checked_for_promotion(image::Repository& repo, const PromoteRequest& req, PromoteResult& r) {
  Checked c{stored_manifest(repo, req.digest), {}};
  r.signature = sign::check_signature(repo, req.digest, *req.public_key, req.policy.required_identity(repo.name(), ""));
  if (!r.signature.ok)
    throw CheckFailed(repo.name() + "@" + req.digest +
                      ": expected a valid signature by the given key before moving tag " + req.tag + ", found " +
                      r.signature.summary() + "; sign it with `imgtool sign` (tag not moved)");
  if (req.policy.sbom) {
    sign::AttestationCheck a = sign::check_attestation(repo, req.digest, *req.public_key, sign::kSpdxPredicateType);
    if (!a.ok)
      throw CheckFailed(repo.name() + "@" + req.digest + ": expected an attestation (" + sign::kSpdxPredicateType +
                        ") by the given key before moving tag " + req.tag + ", found " + a.summary() +
                        "; attach it with `imgtool sign` (tag not moved)");
    c.sbom = a.statement;
  }
  check_hardware_evidence(repo, req, c, r);
  if (req.policy.contents) contents_gate(repo, c.manifest, req.tag, *req.kb);
  return c;
}

// The statement checked in the source, attested in `repo` with `key` and re-checked there.
void attest_again(image::Repository& repo, EVP_PKEY& key, const std::string& digest, const sign::Statement& s) {
  sign::attach_attestation(repo, key, {digest, repo.name(), s.predicate_type, s.predicate});
  sign::AttestationCheck a = sign::check_attestation(repo, digest, key, s.predicate_type);
  if (!a.ok)
    throw CheckFailed(repo.name() + "@" + digest + ": expected the new attestation to verify, found " + a.summary() +
                      " (tag not moved)");
}

// Signed for REPO:TAG with `key` (annotated with the override when one was used), and the signature re-checked.
void sign_for_tag(image::Repository& repo, EVP_PKEY& key, const std::string& digest, const std::string& tag,
                  bool overridden) {
  std::string identity = repo.name() + ":" + tag;
  std::map<std::string, std::string> annotations;
  if (overridden) annotations[verify::kGpuSmokeOverride] = kOverrideNote;
  sign::SignResult s = sign::sign_digest(repo, key, {digest, identity, annotations});
  sign::SignatureCheck c = sign::check_signature(repo, digest, key, identity);
  if (!c.ok)
    throw CheckFailed(repo.name() + "@" + digest + ": expected the new signature to verify, found " + c.summary() +
                      "; another signer may have rewritten " + s.signature_tag + " — re-run (tag not moved)");
}

// Steps 2 and 3 of a promotion into `repo`, `m` already stored there: attest, sign, move the tag.
void release_into(image::Repository& repo, const image::Manifest& m, const Checked& c, const PromoteRequest& req,
                  PromoteResult& r) {
  if (req.sign_key) {
    if (req.policy.sbom) attest_again(repo, *req.sign_key, req.digest, c.sbom);
    if (c.evidence)
      attest_again(repo, *req.sign_key, req.digest,
                   {sign::kInTotoStatementV01, smoke::kSmokePredicateType, {}, smoke::to_predicate(*c.evidence)});
    sign_for_tag(repo, *req.sign_key, req.digest, req.tag, c.overridden);
    r.resigned = true;
  }
  if (auto prev = repo.manifest(req.tag)) r.previous_digest = prev->digest();
  repo.put_manifest(m, req.tag);  // the tag last
}

}  // namespace

PromoteResult promote(image::Repository& from, image::Repository* to, const PromoteRequest& req) {
  check_request(req, to != nullptr);
  PromoteResult r;
  Checked c = checked_for_promotion(from, req, r);
  if (!to) {
    check_tag_identity(from, req);
    release_into(from, c.manifest, c, req, r);
    return r;
  }
  auto src = from.source(req.digest);
  auto dst = to->destination();
  r.copied = image::copy_image(*src, *dst, "");  // 2. the image, by digest
  release_into(*to, stored_manifest(*to, req.digest), c, req, r);
  return r;
}

}  // namespace imgtool::release
