#include "builder/nightly.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <optional>

#include "core/error.h"

namespace imgtool::builder {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

json build_json(const CellBuild& b) {
  return {{"status", to_string(b.status)}, {"attempts", b.attempts}, {"seconds", b.seconds},
          {"log", b.log},                  {"error", b.error}};
}

json cell_header(const GeneratedCell& g, const CellBuild& b) {
  return {{"tag", g.cell.tag},         {"image", b.image},         {"image_id", b.image_id},
          {"inputs_hash", g.inputs_hash}, {"variant", g.cell.variant}, {"cuda", g.cell.cuda},
          {"python", g.cell.python},   {"paddle", g.cell.paddle},  {"build", build_json(b)}};
}

json skipped(const std::string& why) { return {{"status", "skipped"}, {"error", why}, {"seconds", 0.0}}; }

// Everything one nightly run needs per cell.
struct Pipeline {
  const NightlyOptions& opt;
  StateStore& store;
  NightlySteps* steps;
  std::string steps_missing;

  void event(const std::string& line) const {
    if (opt.build.on_event) opt.build.on_event(line);
  }
  std::string smoke_key(const CellBuild& b) const { return b.image_id + "|gpus=" + opt.gpus; }

  json smoke(const GeneratedCell& g, const CellBuild& b) {
    if (!steps) return {{"status", "error"}, {"error", steps_missing}, {"seconds", 0.0}};
    auto cached = store.step("smoke", g.cell.tag, smoke_key(b));
    if (cached && cached->value == "pass" && !opt.fresh_smoke) {
      json j = json::parse(cached->detail, nullptr, false);
      if (!j.is_discarded()) return j.update({{"status", "cached"}, {"seconds", 0.0}}), j;
    }
    event("smoke " + g.cell.tag);
    auto t0 = Clock::now();
    json j;
    try {
      SmokeOutcome s = steps->smoke(g, b);
      j = {{"status", s.passed ? "pass" : "fail"}, {"reasons", s.reasons}, {"warnings", s.warnings},
           {"throughput", s.throughput}, {"seconds", since(t0)}};
    } catch (const std::exception& e) {
      j = {{"status", "error"}, {"error", e.what()}, {"seconds", since(t0)}};
    }
    store.record_step({"smoke", g.cell.tag, smoke_key(b), j["status"], j.dump(), 0});
    event("smoke " + g.cell.tag + ": " + j["status"].get<std::string>());
    return j;
  }

  json publish(const GeneratedCell& g, const CellBuild& b) {
    if (!steps) return {{"status", "failed"}, {"error", steps_missing}, {"seconds", 0.0}};
    std::string ref = opt.target.ref(g.cell);
    if (auto done = unchanged(g, b, ref)) return *done;
    event("publish " + g.cell.tag + " → " + ref + " (push by digest, sign, move tag)");
    auto t0 = Clock::now();
    try {
      PublishOutcome p = steps->publish(g, b);
      store.record_step({"publish", g.cell.tag, ref, p.digest, b.image_id, 0});
      return {{"status", p.unchanged ? "unchanged" : "published"}, {"ref", p.ref}, {"digest", p.digest},
              {"signature_tag", p.signature_tag}, {"seconds", since(t0)}};
    } catch (const std::exception& e) {
      return {{"status", "failed"}, {"ref", ref}, {"error", e.what()}, {"seconds", since(t0)}};
    }
  }

  // Published before for this very image, and the tag still names that digest.
  std::optional<json> unchanged(const GeneratedCell& g, const CellBuild& b, const std::string& ref) {
    auto rec = store.step("publish", g.cell.tag, ref);
    if (!rec || rec->detail != b.image_id) return std::nullopt;
    try {
      if (steps->registry_digest(g) != rec->value) return std::nullopt;
    } catch (const std::exception&) {
      return std::nullopt;  // the publish attempt reports the registry's error
    }
    return json{{"status", "unchanged"}, {"ref", ref}, {"digest", rec->value}, {"seconds", 0.0}};
  }

  json cell(const GeneratedCell& g, const CellBuild& b) {
    json c = cell_header(g, b);
    if (b.status == CellStatus::failed) {
      c["smoke"] = skipped("build failed");
      c["publish"] = skipped("build failed");
    } else {
      c["smoke"] = smoke(g, b);
      bool passed = c["smoke"]["status"] == "pass" || c["smoke"]["status"] == "cached";
      c["publish"] = passed ? publish(g, b) : skipped("smoke did not pass: the tag is not moved");
    }
    std::string p = c["publish"]["status"];
    c["ok"] = p == "published" || p == "unchanged";
    return c;
  }
};

}  // namespace

Shard parse_shard(const std::string& text) {
  Shard s;
  auto slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    size_t used = 0;
    s.index = std::stoi(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("trailing");
    s.count = std::stoi(text.substr(slash + 1), &used);
    if (used != text.size() - slash - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw InputError("--shard: expected i/n (e.g. 1/4), found '" + text + "'");
  }
  if (s.count < 1 || s.index < 1 || s.index > s.count)
    throw InputError("--shard: expected 1 <= i <= n, found '" + text + "'");
  return s;
}

std::vector<GeneratedCell> select_shard(std::vector<GeneratedCell> cells, const Shard& s) {
  std::sort(cells.begin(), cells.end(), [](auto& a, auto& b) { return a.cell.tag < b.cell.tag; });
  std::vector<GeneratedCell> mine;
  for (size_t k = 0; k < cells.size(); ++k)
    if (static_cast<int>(k % s.count) + 1 == s.index) mine.push_back(std::move(cells[k]));
  return mine;
}

json run_nightly(const std::vector<GeneratedCell>& cells, const NightlyOptions& opt, DockerRunner& docker,
                 StateStore& store, NightlySteps* steps, const std::string& steps_missing) {
  auto t0 = Clock::now();
  json report = {{"kind", "imgtool-nightly-report"},
                 {"matrix", opt.matrix},
                 {"registry", opt.target.host + "/" + opt.target.ns},
                 {"gpus", opt.gpus},
                 {"shards", json::array({opt.shard.text()})},
                 {"started", utc_now()}};
  BuildReport built = build_cells(cells, opt.build, docker, store);
  Pipeline p{opt, store, steps, steps_missing};
  json out = json::array();
  bool ok = true;
  for (size_t i = 0; i < cells.size(); ++i) {
    out.push_back(p.cell(cells[i], built.cells[i]));
    ok = ok && out.back()["ok"].get<bool>();
  }
  report["cells"] = out;
  report["builder"] = built.builder;
  report["docker_builds"] = built.docker_builds;
  report["seconds"] = since(t0);
  report["ok"] = ok;
  return report;
}

PublishTarget parse_registry(const std::string& text) {
  std::string t = text;
  if (t.rfind("docker://", 0) == 0) t = t.substr(9);
  while (!t.empty() && t.back() == '/') t.pop_back();
  auto slash = t.find('/');
  PublishTarget p{t.substr(0, slash), slash == std::string::npos ? "" : t.substr(slash + 1)};
  if (p.host.empty())
    throw InputError("--registry: expected HOST[:PORT]/NAMESPACE (e.g. 127.0.0.1:5000/ai), found '" + text + "'");
  return p;
}

}  // namespace imgtool::builder
