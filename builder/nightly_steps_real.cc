#include "builder/nightly_steps_real.h"

#include <optional>

#include "builder/nightly_collect.h"
#include "core/error.h"
#include "image/copy.h"
#include "image/docker_transport.h"
#include "image/registry.h"
#include "sbom/publish.h"
#include "sign/keys.h"
#include "sign/promote.h"
#include "sign/registry_repository.h"
#include "smoke/records_judge.h"
#include "verify/release_gate.h"
#include "smoke/smoke_judge.h"

namespace imgtool::builder {
namespace {

class RealSteps : public NightlySteps {
 public:
  explicit RealSteps(const RealStepsOptions& o)
      : o_(o),
        key_(sign::load_signing_key(o.key, o.passphrase_env)),
        engine_(o.engine ? *o.engine : engine::local_engine()) {
    kb_ = o.kb ? o.kb : &own_kb_.emplace(matrix::KnowledgeBase::load_default());
    reg_ = std::make_shared<image::Registry>(o.target.host,
                                             image::RegistryOptions{.ca_file = o.ca_file, .insecure_http = o.insecure_http});
  }

  // One smoke → record → judge (verify/smoke_judge.h), on the image ID that is later gated and pushed.
  SmokeOutcome smoke(const GeneratedCell& g, const CellBuild& b) override {
    smoke::SmokeOptions so = o_.smoke;
    so.image = image_of(b);
    auto [res, judged] = smoke::smoke_and_judge(so, o_.records, engine_);
    SmokeOutcome out{res.passed(), res.reasons, res.warnings, res.to_json(), nlohmann::json::array()};
    for (auto& j : judged) out.throughput.push_back(judgement_with_history(j, smoke::records_path(o_.records)));
    return out;
  }

  // The release gate on the very image that was smoked (by image ID).
  GateOutcome gate(const GeneratedCell& g, const CellBuild& b) override {
    auto src = engine_.save(image_of(b));
    auto res = verify::release_gate({.ref = "docker-daemon:" + image_of(b), .source = src.get(), .tag = g.cell.tag, .kb = kb_});
    return {res.passed(), res.failed_lines()};
  }

  // Push by digest → sign → move tag, all inside publish_signed (sign/promote.h).
  // The image is read by ID, so a re-tag of b.image after the smoke changes
  // nothing; and nothing is signed unless the pushed config IS the smoked image.
  PublishOutcome publish(const GeneratedCell& g, const CellBuild& b) override {
    std::string repo = o_.target.repo(g.cell);
    sign::RegistryRepository srepo(*reg_, repo);
    std::vector<LayerSize> layers;
    auto push_by_digest = [&] {
      auto src = engine_.save(image_of(b));
      image::DockerDestination dst(reg_, repo);
      auto copied = image::copy_image(*src, dst, "");
      image::Manifest m = reg_->get_manifest(repo, copied.digest);
      if (m.config().digest != b.image_id)
        throw CheckFailed("publish " + g.cell.tag + ": refusing to sign: the pushed config digest " + m.config().digest +
                          " is not the smoked image ID " + b.image_id);
      layers = sizes_of(m);  // the report's sizes, from the manifest just read (no second GET)
      return m;
    };
    // The SPDX SBOM is attested (read back from the registry by digest) before the tag moves.
    auto by_digest = [&](const image::Manifest& m) { return std::make_unique<image::DockerSource>(reg_, repo, m.digest()); };
    sign::PublishRequest req{.tag = g.cell.tag};
    std::map<std::string, std::string> packages;
    req.attach = sbom::attach_sbom_hook(srepo, by_digest, *key_,
                                        [&](const sbom::Document& d) { packages = sbom::package_versions(d); });
    auto res = sign::publish_signed(srepo, push_by_digest, *key_, req);
    return {o_.target.ref(g.cell), res.digest, res.signature_tag, res.already_signed, layers, packages};
  }

  void add_tag(const GeneratedCell& g, const std::string& digest, const std::string& tag) override {
    std::string repo = o_.target.repo(g.cell);
    if (auto cur = reg_->head_manifest(repo, tag); cur && cur->digest == digest) return;
    image::Manifest m = reg_->get_manifest(repo, digest);  // the published bytes, by digest
    reg_->put_manifest(repo, tag, m.raw, m.media_type);
  }

  std::vector<LayerSize> layers_of(const GeneratedCell& g, const std::string& digest) override {
    return sizes_of(reg_->get_manifest(o_.target.repo(g.cell), digest));
  }

  std::string registry_digest(const GeneratedCell& g) override {
    auto info = reg_->head_manifest(o_.target.repo(g.cell), g.cell.tag);
    return info ? info->digest : "";
  }

 private:
  // The image ID from the build (what was smoked); the name only when no ID is known.
  static std::vector<LayerSize> sizes_of(const image::Manifest& m) {
    std::vector<LayerSize> out;
    for (auto& l : m.layers()) out.push_back({l.digest, l.size});
    return out;
  }

  static std::string image_of(const CellBuild& b) { return b.image_id.empty() ? b.image : b.image_id; }

  RealStepsOptions o_;
  sign::Pkey key_;
  std::optional<matrix::KnowledgeBase> own_kb_;  // only when the caller passed none
  const matrix::KnowledgeBase* kb_ = nullptr;
  std::shared_ptr<image::Registry> reg_;
  engine::Engine& engine_;
};

}  // namespace

std::unique_ptr<NightlySteps> make_real_steps(const RealStepsOptions& o) { return std::make_unique<RealSteps>(o); }

}  // namespace imgtool::builder
