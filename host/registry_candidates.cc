#include "host/registry_candidates.h"

#include "core/error.h"
#include "image/config.h"
#include "image/reference.h"
#include "image/registry_repository.h"
#include "matrix/label_claims.h"
#include "sign/attestation.h"
#include "sign/check_signature.h"
#include "verify/evidence_check.h"

namespace imgtool::host {

matrix::Cell cell_from_labels(const std::string& tag, const std::map<std::string, std::string>& l,
                              const matrix::KnowledgeBase& kb) {
  matrix::LabelClaims claims = matrix::read_label_claims(l);
  matrix::Cell c;
  c.tag = tag;
  c.variant = claims.variant;
  c.paddle = claims.paddle;
  c.python = claims.python;
  c.cuda = claims.cuda;
  c.cudnn = claims.cudnn;
  c.min_driver = claims.min_driver;
  c.cuda_archs = claims.cuda_archs;
  if (const matrix::CudaRelease* cr = c.cuda.empty() ? nullptr : kb.cuda(c.cuda)) {
    c.min_driver_full = cr->min_driver_full;
    if (c.min_driver.empty()) c.min_driver = cr->min_driver_compat;
  }
  if (c.min_driver_full.empty()) c.min_driver_full = c.min_driver;
  return c;
}

namespace {

// The image's config; nullopt (and `why`) when it is malformed: that tag is refused, not the run.
std::optional<image::ImageConfig> config_of(image::Registry& reg, const std::string& repo, const image::Manifest& m,
                                            std::string& why) {
  image::Descriptor d = m.config();
  std::string bytes = reg.get_blob_bytes(repo, d);
  try {
    return image::parse_image_config(bytes, "image config " + d.digest);
  } catch (const InputError& e) {
    why = std::string("not selectable: ") + e.what();
    return std::nullopt;
  }
}

// Empty when the cell can be judged; else why not.
std::string unusable(const matrix::Cell& c) {
  if (c.variant != "gpu" && c.variant != "cpu") return "no io.imgtool.variant label (gpu|cpu): not an imgtool image";
  if (!Version::parse(c.paddle)) return "no valid io.imgtool.paddle label";
  if (c.variant == "gpu" && (!Version::parse(c.cuda) || !Version::parse(c.min_driver)))
    return "gpu image without valid io.imgtool.cuda/min-driver labels";
  return "";
}

// What the trust policy asks beyond the signature, read from the registry without the layers (the
// contents were gated before the tag was signed; `imgtool verify` gates them again at pull time):
// the SBOM attestation, and a gpu image's hardware evidence (verify's judgement) or its signed
// override is not enough, as for verify. {rule, why} when refused; why is "" when the tag may be recommended.
std::pair<std::string, std::string> untrusted(image::Repository& repo, const std::string& digest, EVP_PKEY& key,
                                              const matrix::Cell& c, const sign::Policy& policy) {
  if (policy.sbom) {
    auto a = sign::check_attestation(repo, digest, key, sign::kSpdxPredicateType);
    if (!a.ok) return {"sbom", "not selectable under the policy: no SBOM attestation by the key (" + a.summary() + ")"};
  }
  if (!policy.hardware_evidence || c.variant != "gpu") return {};
  verify::HardwareJudgement j = verify::judge_hardware(repo, digest, key, c.variant, c.cuda_archs, policy.require_gpu);
  if (j.holds()) return {};
  return {"hardware evidence", "not selectable under the policy: " + j.gap + " (--allow-without-gpu-smoke accepts it)"};
}

}  // namespace

RegistryCandidates read_repository(const std::string& repository, EVP_PKEY& key, const matrix::KnowledgeBase& kb,
                                   const image::TransportOptions& opt, const sign::Policy& policy) {
  auto ref = image::parse_reference(repository);
  if (ref.transport != image::Transport::docker || !ref.is_repository())
    throw InputError("--repository: expected docker://HOST/REPO without a tag, found '" + repository + "'");
  auto reg_ptr = image::registry_for(ref.host, opt);  // the command's session: one probe, one token
  image::Registry& reg = *reg_ptr;
  image::RegistryRepository repo(reg_ptr, ref.name);
  RegistryCandidates out{.repository = repo.name()};
  for (const std::string& tag : reg.list_tags(ref.name)) {
    if (tag.rfind("sha256-", 0) == 0) continue;  // signatures, attestations
    image::Manifest m = reg.get_manifest(ref.name, tag);
    auto check = sign::check_signature(repo, m.digest(), key, policy.required_identity(ref.repository(), tag));
    if (!check.ok) {
      out.refused.push_back({tag, "signature", "not selectable: " + check.summary()});
      continue;
    }
    std::string bad_config;
    auto config = config_of(reg, ref.name, m, bad_config);
    if (!config) {
      out.refused.push_back({tag, "config", bad_config});
      continue;
    }
    matrix::Cell c = cell_from_labels(tag, config->labels, kb);
    if (auto why = unusable(c); !why.empty())
      out.refused.push_back({tag, "labels", why});
    else if (auto [rule, why] = untrusted(repo, m.digest(), key, c, policy); !why.empty())
      out.refused.push_back({tag, rule, why});
    else {
      out.cells.push_back(c);
      out.digests[tag] = m.digest();
      out.platforms[tag] = config->os + "/" + config->architecture;
    }
  }
  return out;
}

}  // namespace imgtool::host
