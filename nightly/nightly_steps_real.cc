#include "nightly/nightly_steps_real.h"

#include <map>
#include <mutex>
#include <optional>

#include "core/error.h"
#include "image/registry.h"
#include "image/registry_repository.h"
#include "nightly/nightly_collect.h"
#include "release/evidence.h"
#include "release/publish.h"
#include "sbom/inventory.h"
#include "sign/keys.h"
#include "smoke/evidence.h"
#include "smoke/records_judge.h"
#include "smoke/smoke_judge.h"
#include "verify/release_gate.h"

namespace imgtool::nightly {
namespace {

// A dependency the caller must hand down (the library never falls back to a global one).
template <class T>
T& required(T* p, const char* what) {
  if (!p) throw Error(std::string("nightly steps: no ") + what + " was handed down (RealStepsOptions)");
  return *p;
}

class RealSteps : public NightlySteps {
 public:
  explicit RealSteps(const RealStepsOptions& o)
      : o_(o), key_(sign::load_signing_key(o.key, o.passphrase_env)), engine_(required(o.engine, "engine")) {
    kb_ = &required(o.kb, "KB");
    reg_ = image::registry_for(o.target.host, o.transport);
  }

  // One smoke → record → judge (verify/smoke_judge.h), on the image ID that is later gated and pushed.
  SmokeOutcome smoke(const builder::GeneratedCell&, const builder::CellBuild& b) override {
    smoke::SmokeOptions so = o_.smoke;
    so.image = image_of(b);
    SmokeOutcome out{smoke::smoke_and_judge(so, o_.records, engine_), {}, {}};
    out.evidence = smoke::evidence_of_result(out.judged.result, o_.profile);
    for (auto& j : out.judged.throughput)
      out.throughput.push_back(judgement_with_history(j, smoke::records_path(o_.records)));
    return out;
  }

  // The release gate on the very image that was smoked (by image ID). Its one scan of the layers
  // also gathers the SBOM inventory, kept for publish(): the image is read once.
  verify::GateResult gate(const builder::GeneratedCell& g, const builder::CellBuild& b) override {
    auto src = engine_.save(image_of(b));
    return verify::release_gate(
        {.ref = "docker-daemon:" + image_of(b), .source = src.get(), .tag = g.cell.tag, .kb = kb_, .inventory = true});
  }

  // release::publish: by digest -> signed -> SBOM attested (from the gate's inventory) -> tag. The
  // image is read by ID, so a re-tag of b.image after the smoke changes nothing; and nothing is
  // signed unless the pushed config IS the smoked image.
  release::PublishResult publish(const builder::GeneratedCell& g, const builder::CellBuild& b,
                                 const smoke::SmokeEvidence* evidence, const sbom::Inventory* inventory) override {
    image::RegistryRepository repo(reg_, cell_reference(o_.target, g.cell).name);
    auto src = engine_.save(image_of(b));
    return release::publish(repo, *key_,
                            {.image = src.get(),
                             .image_id = b.image_id,
                             .tag = g.cell.tag,
                             .inventory = inventory,  // none: a cached gate (SBOM from the local layers)
                             .evidence = evidence});
  }

  void add_tag(const builder::GeneratedCell& g, const std::string& digest, const std::string& tag) override {
    std::string repo = cell_reference(o_.target, g.cell).name;
    if (auto cur = reg_->head_manifest(repo, tag); cur && cur->digest == digest) return;
    image::Manifest m = reg_->get_manifest(repo, digest);  // the published bytes, by digest
    reg_->put_manifest(repo, tag, m.raw, m.media_type);
  }

  void attest(const builder::GeneratedCell& g, const builder::CellBuild& b, const std::string& digest,
              const smoke::SmokeEvidence& evidence) override {
    image::RegistryRepository repo(reg_, cell_reference(o_.target, g.cell).name);
    release::attest_evidence(repo, *key_, digest, b.image_id, evidence);
  }

  std::vector<LayerSize> layers_of(const builder::GeneratedCell& g, const std::string& digest) override {
    return sizes_of(reg_->get_manifest(cell_reference(o_.target, g.cell).name, digest).layers());
  }

  std::string registry_digest(const builder::GeneratedCell& g) override {
    auto info = reg_->head_manifest(cell_reference(o_.target, g.cell).name, g.cell.tag);
    return info ? info->digest : "";
  }

 private:
  // The image ID from the build (what was smoked); the name only when no ID is known.
  static std::string image_of(const builder::CellBuild& b) { return b.image_id.empty() ? b.image : b.image_id; }

  RealStepsOptions o_;
  sign::Pkey key_;
  const matrix::KnowledgeBase* kb_ = nullptr;
  std::shared_ptr<image::Registry> reg_;
  engine::Engine& engine_;
};

}  // namespace

std::unique_ptr<NightlySteps> make_real_steps(const RealStepsOptions& o) { return std::make_unique<RealSteps>(o); }

}  // namespace imgtool::nightly
