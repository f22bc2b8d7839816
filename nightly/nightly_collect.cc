#include "nightly/nightly_collect.h"

#include <map>
#include <optional>

#include "core/error.h"
#include "core/fs.h"
#include "core/json_file.h"
#include "core/strings.h"
#include "engine/engine.h"
#include "image/reference.h"
#include "image/registry_repository.h"
#include "nightly/report.h"
#include "release/evidence.h"
#include "sign/keys.h"
#include "smoke/binding.h"
#include "smoke/evidence.h"
#include "smoke/pod_facts.h"
#include "smoke/smoke_runner.h"

namespace imgtool::nightly {
namespace {

namespace fs = std::filesystem;

constexpr uintmax_t kMaxSideFile = 1 << 20;  // a pod list, a node, a nonce

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

// "<dir>/<tag>.pod" beside "<dir>/<tag>.json" (no .json suffix: `results/*.json` stays the logs).
fs::path beside(const fs::path& log, const std::string& ext) {
  fs::path p = log;
  return p.replace_extension(ext);
}

std::optional<std::string> read_beside(const fs::path& log, const std::string& ext) {
  fs::path p = beside(log, ext);
  if (!fs::exists(p)) return std::nullopt;
  if (fs::file_size(p) > kMaxSideFile)
    throw InputError(p.string() + ": expected at most " + std::to_string(kMaxSideFile) + " bytes, found more");
  return read_file(p);
}

// The pod's facts from the API server (collect.sh saved them as <tag>.pod/.node/.nonce); nullopt
// without a .pod file: then the document is unbound (nothing says where it ran).
std::optional<smoke::PodFacts> pod_of(const NightlyCell& c, const fs::path& log, std::string& nonce) {
  auto pod = read_beside(log, ".pod");
  if (!pod) return std::nullopt;
  auto node = read_beside(log, ".node");
  std::string where = beside(log, ".pod").string();
  smoke::PodFacts p = smoke::pod_facts(
      parse_json_text(*pod, where, "kubectl's pod list as JSON"),
      parse_json_text(node.value_or("{}"), beside(log, ".node").string(), "kubectl's node as JSON"), where);
  nonce = strings::trim(read_beside(log, ".nonce").value_or(""));
  if (smoke::image_id_digest(p.image_id) != c.publish.digest)
    throw CheckFailed(where + ": pod " + p.name + " ran " + p.image_id + ", not the published digest " +
                      (c.publish.digest.empty() ? std::string("(none in the report)") : c.publish.digest));
  if (!nonce.empty() && p.nonce != nonce)
    throw CheckFailed(where + ": pod " + p.name + " was given --nonce '" + p.nonce + "', tonight's Job '" + nonce +
                      "': a pod of another run");
  return p;
}

smoke::BindingFacts binding_of(const NightlyCell& c, const std::string& started, const std::string& nonce) {
  matrix::LabelClaims claims;
  claims.tag = c.tag, claims.variant = c.variant, claims.cuda = c.cuda, claims.python = c.python;
  claims.paddle = c.paddle, claims.cudnn = c.cudnn, claims.cuda_archs = c.cuda_archs;
  // The nightly that published the cell started before any Job could smoke its digest.
  return {.claims = claims, .image_id = c.image_id, .created = smoke::parse_utc(started), .nonce = nonce};
}

SmokeStep refused(const fs::path& file, const std::string& why) {
  return {.status = SmokeStatus::error, .error = file.string() + ": " + why, .source = "collected: " + file.string()};
}

SmokeStep judge_file(const NightlyCell& c, const fs::path& file, const smoke::RecordOptions& ro,
                     const std::string& started) {
  std::string log = read_file(file);
  auto text = smoke::probe_document_text(log, true);
  if (!text)
    return refused(file, "expected the probe's document between its sentinel lines (the Job's log), found none");
  smoke::SmokeResult res;
  res.image = facts_of(c);
  res.expect_variant = c.variant;
  res.expect_cuda = c.cuda;
  res.argv = {"kubectl", "logs", file.string()};
  std::string nonce;
  std::optional<smoke::PodFacts> pod;
  try {
    pod = pod_of(c, file, nonce);
  } catch (const std::exception& e) {
    return refused(file, e.what());
  }
  res.run = {.mode = smoke::GpuHost::gpu, .gpus_passed = pod && pod->gpus > 0, .pod = pod};
  smoke::judge_smoke(res, {.exit_code = 0, .out = std::string(*text)});
  SmokeStep s{.source = "collected: " + file.string()};
  if (!res.probe.is_object()) return refused(file, "expected the probe's JSON document (the Job's log), found none");
  auto binding = smoke::binding_contradictions(res.probe, binding_of(c, started, nonce), std::time(nullptr));
  if (!binding.empty())
    return refused(file,
                   "the document is not about " + c.tag + "@" + c.publish.digest + ": " + strings::join(binding, "; "));
  auto judged = smoke::record_and_judge_smoke(res, ro);
  smoke::SmokeEvidence e = pod ? smoke::evidence_of_run(res.probe, res.run, c.variant, s.source)
                               : smoke::evidence_from_probe(res.probe, s.source);
  if (!pod) e.host_why = "no pod facts (" + beside(file, ".pod").string() + "): nothing says where it ran";
  e.argv = res.argv;
  s.evidence = e;
  s.status = res.passed() ? SmokeStatus::pass : SmokeStatus::fail;
  s.reasons = res.reasons;
  s.warnings = res.warnings;
  for (auto& j : judged) s.throughput.push_back(judgement_with_history(j, smoke::records_path(ro)));
  return s;
}

// The cell's evidence attested for its published digest (HOST/NS/REPO:TAG + digest in the report).
void attest(NightlyCell& c, EVP_PKEY& key, const image::TransportOptions& to) {
  if (c.publish.digest.empty() || !c.smoke.evidence) return;
  try {
    image::Reference r = image::parse_docker_reference(c.publish.ref);
    auto repo_ptr = image::open_repository(r, to);
    image::RegistryRepository& repo = *repo_ptr;
    smoke::SmokeEvidence signed_e;
    release::attest_evidence(repo, key, c.publish.digest, c.image_id, *c.smoke.evidence, &signed_e);
    c.smoke.evidence = signed_e;  // the report shows what was signed (attested, image)
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
    if (auto size = fs::file_size(f); size > engine::kMaxRunOutput)  // the cap `docker run` output has here
      throw InputError(f.string() + ": expected a probe result of at most " + std::to_string(engine::kMaxRunOutput) +
                       " bytes (a Job's log), found " + std::to_string(size) + " bytes");
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
    by_tag[tag]->smoke = judge_file(*by_tag[tag], file, o.records, report.started);
    if (key) attest(*by_tag[tag], *key, o.transport);
  }
  return report;
}

}  // namespace imgtool::nightly
