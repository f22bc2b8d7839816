#include "builder/nightly_collect.h"

#include <map>

#include "builder/report.h"
#include "core/error.h"
#include "core/fs.h"
#include "image/reference.h"
#include "image/registry_repository.h"
#include "release/evidence.h"
#include "sign/keys.h"
#include "smoke/evidence.h"

namespace imgtool::builder {
namespace {

namespace fs = std::filesystem;

std::string tag_of(const fs::path& file) {
  std::string name = file.filename().string();
  const std::string ext = ".json";
  return name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0
             ? name.substr(0, name.size() - ext.size())
             : name;
}

smoke::ImageFacts facts_of(const NightlyCell& c) {
  std::string ref = c.publish.ref.empty() ? c.image : c.publish.ref;
  std::string digest = c.publish.digest.empty() ? c.image_id : c.publish.digest;
  return {.ref = ref, .id = c.image_id, .digest = digest, .tag = c.tag, .variant = c.variant, .cuda = c.cuda};
}

SmokeStep judge_file(const NightlyCell& c, const fs::path& file, const smoke::RecordOptions& ro) {
  smoke::SmokeResult res;
  res.image = facts_of(c);
  res.expect_variant = c.variant;
  res.expect_cuda = c.cuda;
  res.argv = {"kubectl", "logs", file.string()};
  smoke::judge_smoke(res, {.exit_code = 0, .out = read_file(file)});
  SmokeStep s{.source = "collected: " + file.string()};
  if (!res.probe.is_object()) {
    s.status = SmokeStatus::error;
    s.error = file.string() + ": expected the probe's JSON document (the Job's log), found none";
    return s;
  }
  auto judged = smoke::record_and_judge_smoke(res, ro);
  smoke::SmokeEvidence e = smoke::evidence_from_probe(res.probe, s.source);
  e.verdict = res.verdict;  // imgtool's judgement, as for a smoke run here
  e.argv = res.argv;
  s.evidence = smoke::to_predicate(e);
  s.status = res.passed() ? SmokeStatus::pass : SmokeStatus::fail;
  s.reasons = res.reasons;
  s.warnings = res.warnings;
  for (auto& j : judged) s.throughput.push_back(judgement_with_history(j, smoke::records_path(ro)));
  return s;
}

// The cell's evidence attested for its published digest (HOST/NS/REPO:TAG + digest in the report).
void attest(NightlyCell& c, EVP_PKEY& key, const image::RegistryOptions& ro) {
  if (c.publish.digest.empty() || c.smoke.evidence.is_null()) return;
  try {
    image::Reference r = image::parse_reference("docker://" + c.publish.ref);
    image::RegistryRepository repo(std::make_shared<image::Registry>(r.host, ro), r.name);
    release::attest_evidence(repo, key, c.publish.digest, c.image_id, smoke::from_predicate(c.smoke.evidence));
    c.smoke.source += "; evidence attested for " + c.publish.digest;
  } catch (const std::exception& e) {
    c.smoke.status = SmokeStatus::error;
    c.smoke.error = std::string("the smoke evidence was not attested: ") + e.what();
  }
}

}  // namespace

ThroughputPoint judgement_with_history(const smoke::Judgement& j, const std::string& records_file) {
  const auto& r = j.record;
  ThroughputPoint out{.metric = r.metric,
                      .unit = r.unit,
                      .gpu = r.gpu,
                      .driver = r.driver,
                      .value = r.value,
                      .status = j.status,
                      .floor = j.floor,
                      .median = j.median,
                      .history_runs = j.history_runs,
                      .notes = j.notes};
  smoke::RecordStore store(records_file);
  for (auto& h : store.query({.tag = r.tag, .gpu = r.gpu, .driver = r.driver, .metric = r.metric, .limit = 30}))
    out.history.push_back({h.time, h.value});
  return out;
}

NightlyReport collect_results(const CollectOptions& o) {
  if (o.results.empty()) throw InputError("nightly collect: expected probe result files (<tag>.json), found none");
  NightlyReport report = read_report(o.from_report);
  std::map<std::string, NightlyCell*> by_tag;
  for (auto& c : report.cells) by_tag[c.tag] = &c;
  std::map<std::string, fs::path> files;  // checked first: nothing is recorded for bad input
  for (auto& f : o.results) {
    std::string tag = tag_of(f);
    if (!fs::is_regular_file(f)) throw InputError(f.string() + ": expected a probe result file, found none");
    if (!by_tag.count(tag))
      throw InputError(f.string() + ": expected <tag>.json for a cell of " + (o.from_report / "nightly.json").string() +
                       ", found tag '" + tag + "' not in it");
    if (!files.emplace(tag, f).second)
      throw InputError(f.string() + ": tag '" + tag + "' also comes from " + files[tag].string() +
                       "; expected one result per cell");
  }
  sign::Pkey key =
      o.key.empty() ? nullptr : sign::load_signing_key(o.key, o.passphrase_env);  // before anything is recorded
  for (auto& [tag, file] : files) {
    by_tag[tag]->smoke = judge_file(*by_tag[tag], file, o.records);
    if (key) attest(*by_tag[tag], *key, o.registry);
  }
  return report;
}

}  // namespace imgtool::builder
