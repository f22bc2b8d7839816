#include "builder/nightly_steps_real.h"

#include "core/error.h"
#include "image/copy.h"
#include "image/daemon_transport.h"
#include "image/docker_transport.h"
#include "image/registry.h"
#include "sign/keys.h"
#include "sign/promote.h"
#include "sign/registry_repository.h"
#include "verify/records_judge.h"
#include "verify/smoke_report.h"
#include "verify/smoke_runner.h"

namespace imgtool::builder {
namespace {

class RealSteps : public NightlySteps {
 public:
  explicit RealSteps(const RealStepsOptions& o)
      : o_(o), key_(sign::load_private_key(o.key, sign::passphrase_from_env(o.passphrase_env))) {
    image::RegistryOptions ro;
    ro.ca_file = o.ca_file;
    ro.insecure_http = o.insecure_http;
    reg_ = std::make_shared<image::Registry>(o.target.host, ro);
  }

  SmokeOutcome smoke(const GeneratedCell& g, const CellBuild& b) override {
    verify::SmokeOptions so;
    so.image = b.image;
    so.gpus = o_.gpus;
    so.shm_size = o_.shm_size;
    verify::SmokeResult res = verify::run_smoke(so);
    auto judged = judge(res);
    verify::apply_throughput(res, judged);
    SmokeOutcome out{res.passed(), res.reasons, res.warnings, res.to_json(), nlohmann::json::array()};
    for (auto& j : judged) out.throughput.push_back(with_history(j));
    return out;
  }

  // Push by digest → sign → move tag, all inside publish_signed (sign/promote.h).
  PublishOutcome publish(const GeneratedCell& g, const CellBuild& b) override {
    std::string repo = o_.target.repo(g.cell);
    sign::RegistryRepository srepo(*reg_, repo);
    auto push_by_digest = [&] {
      image::DaemonSource src(b.image);
      image::DockerDestination dst(reg_, repo);
      auto copied = image::copy_image(src, dst, "");
      return reg_->get_manifest(repo, copied.digest);
    };
    auto res = sign::publish_signed(srepo, push_by_digest, *key_, {.tag = g.cell.tag});
    return {o_.target.ref(g.cell), res.digest, res.signature_tag, res.already_signed};
  }

  std::string registry_digest(const GeneratedCell& g) override {
    auto info = reg_->head_manifest(o_.target.repo(g.cell), g.cell.tag);
    return info ? info->digest : "";
  }

 private:
  // The judgement plus the series' last 30 values (same tag, GPU, driver, metric) for the report's chart.
  nlohmann::json with_history(const verify::Judgement& j) {
    nlohmann::json out = j.to_json();
    verify::RecordStore store(records_path());
    const auto& r = j.record;
    out["history"] = nlohmann::json::array();
    for (auto& h : store.query({.tag = r.tag, .gpu = r.gpu, .driver = r.driver, .metric = r.metric, .limit = 30}))
      out["history"].push_back({{"time", h.time}, {"value", h.value}});
    return out;
  }
  std::string records_path() const {
    return o_.records.empty() ? verify::RecordStore::default_path() : o_.records;
  }

  std::vector<verify::Judgement> judge(const verify::SmokeResult& res) {
    auto recs = verify::records_from_probe(res.probe, res.image.digest, res.image.tag, verify::system_clock()());
    if (recs.empty()) return {};
    verify::RecordStore store(records_path());
    return verify::record_and_judge(store, recs, verify::kb_peaks());
  }

  RealStepsOptions o_;
  sign::Pkey key_;
  std::shared_ptr<image::Registry> reg_;
};

}  // namespace

std::unique_ptr<NightlySteps> make_real_steps(const RealStepsOptions& o) { return std::make_unique<RealSteps>(o); }

}  // namespace imgtool::builder
