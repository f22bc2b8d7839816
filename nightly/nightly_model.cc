#include "nightly/nightly_model.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "core/error.h"
#include "smoke/evidence.h"

namespace imgtool::nightly {
namespace {

using json = nlohmann::json;

// One table per enum: the JSON word for each value.
using Field = std::pair<const char*, std::string*>;

template <typename E>
using Names = std::vector<std::pair<E, const char*>>;

const Names<builder::CellStatus> kBuild = {{builder::CellStatus::built, "built"},
                                           {builder::CellStatus::up_to_date, "up-to-date"},
                                           {builder::CellStatus::failed, "FAILED"}};
const Names<SmokeStatus> kSmoke = {{SmokeStatus::pass, "pass"},
                                   {SmokeStatus::fail, "fail"},
                                   {SmokeStatus::cached, "cached"},
                                   {SmokeStatus::skipped, "skipped"},
                                   {SmokeStatus::error, "error"}};
const Names<GateStatus> kGate = {{GateStatus::pass, "pass"},
                                 {GateStatus::fail, "fail"},
                                 {GateStatus::skipped, "skipped"},
                                 {GateStatus::error, "error"},
                                 {GateStatus::cached, "cached"}};
const Names<PublishStatus> kPublish = {{PublishStatus::published, "published"},
                                       {PublishStatus::unchanged, "unchanged"},
                                       {PublishStatus::failed, "failed"},
                                       {PublishStatus::skipped, "skipped"}};

const Names<KbCheckStatus> kKbCheck = {{KbCheckStatus::not_checked, "not checked"},
                                       {KbCheckStatus::up_to_date, "up to date"},
                                       {KbCheckStatus::stale, "stale"},
                                       {KbCheckStatus::incomplete, "incomplete"},
                                       {KbCheckStatus::error, "error"}};

template <typename E>
std::string name_of(const Names<E>& t, E e) {
  for (auto& [v, n] : t)
    if (v == e) return n;
  return "?";
}

template <typename E>
E parse(const Names<E>& t, const json& j, const char* field) {
  std::string s = j.value(field, "");
  for (auto& [v, n] : t)
    if (s == n) return v;
  std::string want;
  for (auto& [v, n] : t) want += (want.empty() ? "" : "|") + std::string(n);
  throw InputError(std::string("nightly report: field '") + field + "' expected " + want + ", found '" + s + "'");
}

std::vector<std::string> strings(const json& j, const char* key) {
  return j.contains(key) && j[key].is_array() ? j[key].get<std::vector<std::string>>() : std::vector<std::string>{};
}

// An integer field, `fallback` when absent. Anything but an integer that fits T is the
// report's error: nlohmann's get<int>() of 1e300 would be undefined behaviour.
template <typename T>
T integer(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  bool fits = it->is_number_integer() && !(it->is_number_unsigned() && it->get<uint64_t>() > INT64_MAX);
  int64_t v = fits ? it->get<int64_t>() : 0;
  if (!fits || v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
    throw InputError(std::string("nightly report: field '") + key + "' expected an integer, found " + it->dump());
  return static_cast<T>(v);
}

const json& part(const json& j, const char* key) {
  static const json none = json::object();
  return j.contains(key) && j[key].is_object() ? j[key] : none;
}

double number(const json& j, const char* key, double fallback = 0) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

std::optional<double> maybe_number(const json& j, const char* key) {
  if (j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return std::nullopt;
}

std::string text(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

const Names<CheckStatus> kVerdict = {
    {CheckStatus::kPass, "ok"}, {CheckStatus::kWarn, "warn"}, {CheckStatus::kFail, "fail"}};

}  // namespace

void to_json(json& j, const ThroughputPoint& t) {
  json history = json::array();
  for (auto& h : t.history) history.push_back({{"time", h.time}, {"value", h.value}});
  j = {{"metric", t.metric},
       {"value", t.value},
       {"unit", t.unit},
       {"status", name_of(kVerdict, t.status)},
       {"gpu", t.gpu},
       {"driver", t.driver},
       {"history_runs", t.history_runs},
       {"notes", t.notes},
       {"floor", t.floor ? json(*t.floor) : json(nullptr)},
       {"median", t.median ? json(*t.median) : json(nullptr)},
       {"history", history}};
}

// Lenient as the report's other detail fields: what is missing or mistyped reads as empty, except a
// verdict word nobody knows or a count that is not an integer (the report's error, InputError).
void from_json(const json& j, ThroughputPoint& t) {
  const json& r = j.contains("record") && j["record"].is_object() ? j["record"] : j;  // older reports nested it
  t.metric = text(r, "metric");
  t.unit = text(r, "unit");
  t.gpu = text(r, "gpu");
  t.driver = text(r, "driver");
  t.value = number(r, "value");
  t.status = j.contains("status") ? parse(kVerdict, j, "status") : CheckStatus::kPass;
  t.floor = maybe_number(j, "floor");
  t.median = maybe_number(j, "median");
  t.history_runs = integer<int>(j, "history_runs", 0);
  t.notes = strings(j, "notes");
  t.history.clear();
  for (auto& h : j.value("history", json::array()))
    if (h.is_object()) t.history.push_back({integer<int64_t>(h, "time", 0), number(h, "value")});
}

std::string to_string(SmokeStatus s) { return name_of(kSmoke, s); }
std::string to_string(GateStatus s) { return name_of(kGate, s); }
std::string to_string(PublishStatus s) { return name_of(kPublish, s); }
std::string to_string(KbCheckStatus s) { return name_of(kKbCheck, s); }

std::string NightlyCell::problem() const {
  auto first = [](const std::string& step, const std::string& error, const std::vector<std::string>& reasons) {
    if (!error.empty()) return step + ": " + error;
    return reasons.empty() ? std::string() : step + ": " + reasons.front();
  };
  for (const std::string& p : {first("build", build.error, {}), first("smoke", smoke.error, smoke.reasons),
                               first("gate", gate.error, gate.failed), first("publish", publish.error, {})})
    if (!p.empty()) return p;
  return "";
}

bool NightlyReport::ok() const {
  return std::all_of(cells.begin(), cells.end(), [](const NightlyCell& c) { return c.ok(); });
}

void to_json(json& j, const SmokeStep& s) {
  j = {{"status", to_string(s.status)}, {"seconds", s.seconds},       {"reasons", s.reasons},
       {"warnings", s.warnings},        {"throughput", s.throughput}, {"error", s.error}};
  if (!s.source.empty()) j["source"] = s.source;
  if (s.evidence) j["evidence"] = smoke::to_predicate(*s.evidence);  // the report's one mapping of it
}

std::vector<LayerSize> sizes_of(const std::vector<image::Descriptor>& layers) {
  std::vector<LayerSize> out;
  for (const auto& l : layers) out.push_back({l.digest, l.size});
  return out;
}

std::string SmokeStep::evidence_summary() const { return evidence ? evidence->summary() : ""; }

bool SmokeStep::hardware() const { return evidence && evidence->hardware_pass(); }

std::vector<std::string> NightlyReport::without_hardware_evidence() const {
  std::vector<std::string> out;
  for (const auto& c : cells)
    if (c.variant == "gpu" && c.publish.ok() && !c.smoke.hardware())
      out.push_back(c.tag + ": " + (c.smoke.evidence ? c.smoke.evidence_summary() : "no smoke evidence"));
  return out;
}

void from_json(const json& j, SmokeStep& s) {
  s.status = parse(kSmoke, j, "status");
  s.seconds = j.value("seconds", 0.0);
  s.reasons = strings(j, "reasons");
  s.warnings = strings(j, "warnings");
  s.throughput.clear();
  if (j.contains("throughput") && j["throughput"].is_array())
    for (auto& t : j["throughput"])
      if (t.is_object()) s.throughput.push_back(t.get<ThroughputPoint>());
  s.error = j.value("error", "");
  s.source = j.value("source", "");
  s.evidence.reset();
  if (j.contains("evidence") && !j["evidence"].is_null()) {
    try {
      s.evidence = smoke::from_predicate(j["evidence"]);
    } catch (const CheckFailed& e) {  // the report is input: a predicate that is none is refused, with the field
      throw InputError(std::string("smoke.evidence: ") + e.what());
    }
  }
}

void to_json(json& j, const NightlyCell& c) {
  j = {{"tag", c.tag},
       {"image", c.image},
       {"image_id", c.image_id},
       {"built_image_id", c.built_image_id},
       {"inputs_hash", c.inputs_hash},
       {"kb_version", c.kb_version},
       {"base", c.base},
       {"variant", c.variant},
       {"cuda", c.cuda},
       {"python", c.python},
       {"paddle", c.paddle},
       {"cudnn", c.cudnn},
       {"cuda_archs", c.cuda_archs},
       {"ok", c.ok()},
       {"smoke", c.smoke},
       {"packages", c.packages},
       {"changes", c.changes},
       {"promote", c.promote}};
  j["layers"] = json::array();
  for (auto& l : c.layers) j["layers"].push_back({{"digest", l.digest}, {"size", l.size}});
  j["build"] = {{"status", to_string(c.build.status)},
                {"attempts", c.build.attempts},
                {"seconds", c.build.seconds},
                {"log", c.build.log},
                {"error", c.build.error}};
  if (!c.reproduce.outcome.empty())
    j["reproduce"] = {{"outcome", c.reproduce.outcome},
                      {"detail", c.reproduce.detail},
                      {"rebuilt_digest", c.reproduce.rebuilt_digest},
                      {"seconds", c.reproduce.seconds}};
  j["gate"] = {{"status", to_string(c.gate.status)},
               {"seconds", c.gate.seconds},
               {"failed", c.gate.failed},
               {"error", c.gate.error}};
  j["publish"] = {{"status", to_string(c.publish.status)},
                  {"seconds", c.publish.seconds},
                  {"ref", c.publish.ref},
                  {"digest", c.publish.digest},
                  {"signature_tag", c.publish.signature_tag},
                  {"error", c.publish.error},
                  {"dated_tag", c.publish.dated_tag}};
}

void from_json(const json& j, NightlyCell& c) {
  for (auto [field, to] : std::initializer_list<Field>{{"tag", &c.tag},
                                                       {"image", &c.image},
                                                       {"image_id", &c.image_id},
                                                       {"built_image_id", &c.built_image_id},
                                                       {"inputs_hash", &c.inputs_hash},
                                                       {"kb_version", &c.kb_version},
                                                       {"base", &c.base},
                                                       {"variant", &c.variant},
                                                       {"cuda", &c.cuda},
                                                       {"python", &c.python},
                                                       {"paddle", &c.paddle},
                                                       {"cudnn", &c.cudnn},
                                                       {"cuda_archs", &c.cuda_archs}})
    *to = j.value(field, "");
  const json &b = part(j, "build"), &g = part(j, "gate"), &p = part(j, "publish");
  c.build = {parse(kBuild, b, "status"), integer(b, "attempts", 0), b.value("seconds", 0.0), b.value("log", ""),
             b.value("error", "")};
  c.smoke = part(j, "smoke").get<SmokeStep>();
  c.gate = {g.contains("status") ? parse(kGate, g, "status") : GateStatus::skipped, g.value("seconds", 0.0),
            strings(g, "failed"), g.value("error", "")};
  c.publish = {parse(kPublish, p, "status"), p.value("seconds", 0.0),      p.value("ref", ""),
               p.value("digest", ""),        p.value("signature_tag", ""), p.value("error", "")};
  c.publish.dated_tag = p.value("dated_tag", "");
  const json& r = part(j, "reproduce");
  c.reproduce = {text(r, "outcome"), text(r, "detail"), text(r, "rebuilt_digest"), number(r, "seconds")};
  c.layers.clear();
  for (auto& l : j.value("layers", json::array()))
    if (l.is_object()) c.layers.push_back({l.value("digest", ""), integer<int64_t>(l, "size", 0)});
  c.packages.clear();
  if (j.contains("packages") && j["packages"].is_object())
    for (auto& [k, v] : j["packages"].items())
      if (v.is_string()) c.packages[k] = v.get<std::string>();
  c.changes = strings(j, "changes");
  c.promote = j.value("promote", "");
}

void to_json(json& j, const KbState& k) {
  j = {{"version", k.version}, {"released", k.released}, {"age_days", k.age_days}, {"check", to_string(k.check)},
       {"index", k.index},     {"stale", k.stale},       {"errors", k.errors}};
}

// A report written before the KB was in it has no "kb": not checked, nothing known.
void from_json(const json& j, KbState& k) {
  k.version = j.value("version", "");
  k.released = j.value("released", "");
  k.age_days = integer<long>(j, "age_days", 0);
  k.check = j.contains("check") ? parse(kKbCheck, j, "check") : KbCheckStatus::not_checked;
  k.index = j.value("index", "");
  k.stale = strings(j, "stale");
  k.errors = strings(j, "errors");
}

void to_json(json& j, const NightlyReport& r) {
  j = {{"kind", "imgtool-nightly-report"},
       {"matrix", r.matrix},
       {"registry", r.registry},
       {"gpus", r.gpus},
       {"builder", r.builder},
       {"shards", r.shards},
       {"started", r.started},
       {"seconds", r.seconds},
       {"docker_builds", r.docker_builds},
       {"ok", r.ok()},
       {"previous", r.previous},
       {"release", r.release},
       {"kb", r.kb},
       {"cells", r.cells}};
}

void from_json(const json& j, NightlyReport& r) {
  if (!j.is_object() || j.value("kind", "") != "imgtool-nightly-report")
    throw InputError("nightly report: field 'kind' expected imgtool-nightly-report");
  for (auto [field, to] : std::initializer_list<Field>{{"matrix", &r.matrix},
                                                       {"registry", &r.registry},
                                                       {"gpus", &r.gpus},
                                                       {"builder", &r.builder},
                                                       {"started", &r.started},
                                                       {"previous", &r.previous},
                                                       {"release", &r.release}})
    *to = j.value(field, "");
  r.shards = strings(j, "shards");
  r.seconds = j.value("seconds", 0.0);
  r.docker_builds = integer(j, "docker_builds", 0);
  r.kb = part(j, "kb").get<KbState>();
  r.cells.clear();
  for (auto& c : j.value("cells", json::array())) r.cells.push_back(c.get<NightlyCell>());
}

}  // namespace imgtool::nightly
