#include "verify/verify_image.h"

#include <memory>
#include <optional>

#include "core/error.h"
#include "image/config.h"
#include "image/platform.h"
#include "image/reference.h"
#include "image/registry_repository.h"
#include "matrix/labels.h"
#include "sign/check_signature.h"
#include "verify/evidence_check.h"
#include "verify/sbom_check.h"
#include "verify/static_checks.h"

namespace imgtool::verify {

namespace {

void check_request(const VerifyRequest& req) {
  if (req.signature && !req.public_key)
    throw InputError("verify: expected --key PUBLIC_KEY (or --no-signature), found none");
  if (req.policy.contents && !req.kb)
    throw InputError("verify: expected a knowledge base for the claims check, found none");
}

// Where the signatures and attestations of a registry image live (none for other transports).
std::unique_ptr<image::RegistryRepository> signature_repository(const image::Reference& r,
                                                                const image::TransportOptions& t) {
  if (r.transport != image::Transport::docker) return nullptr;
  return image::open_repository(r, t);  // the source's client: one /v2/ probe, one token per scope
}

bool signature_failed(const Report& r) {
  for (const auto& c : r.checks)
    if (c.id == "signature" && c.status == Status::kFail) return true;
  return false;
}

// The smoke.evidence row (evidence_check.h); skipped when the signature failed (nothing the image
// carries is believed then).
void add_evidence_row(Report& report, image::Repository& repo, image::ImageSource& src, const image::Manifest& m,
                      const VerifyRequest& req, const std::string& tag) {
  if (signature_failed(report)) {
    report.add({"smoke.evidence", "how the image was smoked (signed hardware evidence)", Status::kSkip,
                "a signed smoke attestation", "not read: the signature check failed", "fix the signature first"});
    return;
  }
  image::ImageConfig cfg = image::read_image_config(src, m);
  const sign::Policy& p = req.policy;
  HardwareJudgement j = judge_hardware(repo, m.digest(), *req.public_key, cfg.label(labels::kVariant),
                                       cfg.label(labels::kCudaArchs), p.require_gpu);
  std::string override_note;
  if (!j.holds()) {  // the signature the signature row accepted (the exact tag's: promote writes its override there)
    auto sig = sign::check_signature(repo, m.digest(), *req.public_key, p.required_identity(repo.name(), tag));
    if (auto it = sig.accepted_annotations.find(kGpuSmokeOverride); it != sig.accepted_annotations.end())
      override_note = it->second;
  }
  report.add(evidence_row(j, p.hardware_evidence, override_note));
}

}  // namespace

Report verify_image(const VerifyRequest& req) {
  check_request(req);
  image::Reference r = image::parse_reference(req.ref);
  std::string index_digest;  // an index: its linux/amd64 image, as promote; the index's signature holds too
  auto source = image::open_platform_source(r, req.transport, {}, &index_digest);
  auto repo = signature_repository(r, req.transport);
  StaticInputs in{req.ref, source.get(), repo.get(), "", r.tag, index_digest};
  VerifyOptions opt{req.public_key, req.key_name, req.signature, req.policy, req.kb};
  bool sbom_rows = repo && req.public_key && req.signature && req.policy.sbom;
  StaticResult s = check_static(in, opt, sbom_rows);  // the SBOM inventory from the claims scan: layers decoded once
  Report& report = s.report;
  if (report.digest.empty()) return report;  // unreadable: the read row says why
  if (sbom_rows)
    add_sbom_rows(report, *repo, *source, s.manifest, *req.public_key, req.key_name,
                  s.inventory ? &*s.inventory : nullptr);
  if (repo && req.public_key && req.signature) add_evidence_row(report, *repo, *source, s.manifest, req, r.tag);
  if (req.smoke) {
    VerifySmokeOptions so = req.smoke_options;
    so.transport = req.transport;
    verify_smoke(req.ref, s.manifest, report, so);
  }
  return std::move(report);
}

}  // namespace imgtool::verify
