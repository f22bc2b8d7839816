// Unit tests of the nightly pipeline's order and gating with injected steps,
// sharding, and the report renderers/merge. The real steps are covered by
// nightly/integration_test.cc (real engine + loopback registry).
#include "nightly/nightly.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "builder/testing/cell_folder.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "engine/fake_engine.h"
#include "image/http.h"
#include "matrix/testing/cells.h"
#include "nightly/nightly_reproduce.h"
#include "nightly/report.h"
#include "tests/source_kb.h"
#include "tests/test_dirs.h"

using namespace imgtool;
using namespace imgtool::builder;
using namespace imgtool::nightly;
using json = nlohmann::json;
using imgtool::engine::FakeEngine;

namespace {

// Smoke fails gpu cells (CPU-only wheel); publish records what it was asked to do.
class FakeSteps : public NightlySteps {
 public:
  std::vector<std::string> calls;
  std::vector<std::string> inventories;          // the cells whose publish got the gate's inventory
  std::map<std::string, std::string> registry;   // tag -> digest
  std::optional<smoke::SmokeEvidence> evidence;  // what smoke() says of how it ran (none: nothing)
  SmokeOutcome smoke(const GeneratedCell& g, const CellBuild&) override {
    calls.push_back("smoke " + g.cell.tag);
    SmokeOutcome out;
    if (g.cell.variant == "gpu") {
      out.judged.result.reasons = {"CPU-only Paddle build in a gpu image"};
      return out;
    }
    out.judged.result.verdict = "pass";
    out.evidence = evidence;
    out.throughput = json::array({{{"metric", "gemm"},
                                   {"value", 2.0},
                                   {"unit", "TFLOP/s"},
                                   {"status", "ok"},
                                   {"floor", 1.0},
                                   {"history", json::array({{{"time", 1}, {"value", 1.8}}})}}})
                         .get<std::vector<ThroughputPoint>>();
    return out;
  }
  // A cell named "lying…" carries labels its contents contradict.
  verify::GateResult gate(const GeneratedCell& g, const CellBuild&) override {
    calls.push_back("gate " + g.cell.tag);
    verify::GateResult r;
    if (g.cell.tag.rfind("lying", 0) == 0)
      r.report.add({"claims.paddle", "Paddle", verify::Status::kFail, "3.1.0", "3.2.0", ""});
    else
      r.inventory = sbom::Inventory{};
    return r;
  }
  release::PublishResult publish(const GeneratedCell& g, const CellBuild& b, const smoke::SmokeEvidence*,
                                 const sbom::Inventory* inventory) override {
    if (inventory) inventories.push_back(g.cell.tag);  // the gate's, handed over with the cell
    calls.push_back("publish " + g.cell.tag);
    registry[g.cell.tag] = "sha256:" + sha256_hex(b.image_id);
    release::PublishResult r{.digest = registry[g.cell.tag], .signature_tag = "sig"};
    for (const auto& l : layers_of(g, r.digest)) r.layers.push_back({.digest = l.digest, .size = l.size});
    r.packages = {{"pypi/numpy", "1.26.4"}, {"deb/libc6", "2.36-9"}};
    return r;
  }
  std::map<std::string, std::string> extra_tags;  // tag -> digest
  bool tag_fails = false;
  void add_tag(const GeneratedCell&, const std::string& digest, const std::string& tag) override {
    calls.push_back("tag " + tag);
    if (tag_fails) throw Error("registry: 500 on PUT");
    extra_tags[tag] = digest;
  }
  // Every cell shares the base layer; its own layer is named after the digest.
  std::vector<LayerSize> layers_of(const GeneratedCell&, const std::string& digest) override {
    return {{"sha256:base", 30 << 20}, {"sha256:own-" + digest.substr(7, 12), 5 << 20}};
  }
  std::map<std::string, smoke::SmokeEvidence> attested;  // digest -> the evidence attested for it after publish
  void attest(const GeneratedCell& g, const CellBuild&, const std::string& digest,
              const smoke::SmokeEvidence& e) override {
    calls.push_back("attest " + g.cell.tag);
    attested[digest] = e;
  }
  std::string registry_digest(const GeneratedCell& g) override {
    calls.push_back("head " + g.cell.tag);
    return registry.count(g.cell.tag) ? registry[g.cell.tag] : "";
  }
};

struct Fixture {
  fs::path root = fs::temp_directory_path() / ("imgtool-nightly-test-" + std::to_string(::getpid()));
  Fixture() { fs::remove_all(root); }
  ~Fixture() { fs::remove_all(root); }
  GeneratedCell cell(const std::string& tag, const std::string& variant) {
    matrix::Cell c = matrix::testing::cell(tag, variant);
    c.base_image = "b";
    return builder::testing::write_cell(root / "gen" / tag, {.cell = c, .inputs_hash = sha256_digest(tag)}, "FROM b\n");
  }
  NightlyOptions options() {
    NightlyOptions o;
    o.build.log_dir = root / "logs";
    o.target = parse_registry("127.0.0.1:5000/ai");
    o.matrix = "test";
    o.today = "20261124";
    return o;
  }
};

}  // namespace

TEST_CASE("nightly: only cells whose smoke passed are published; failures are isolated") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("broken", "cpu"), f.cell("cpu", "cpu"), f.cell("gpu", "gpu")};
  FakeEngine docker;
  docker.build_script["paddle:broken"] = {"returned a non-zero code: 4"};
  FakeSteps steps;
  StateStore store(f.root / "state");
  NightlyReport r = run_nightly(cells, f.options(), docker, store, &steps);
  CHECK_FALSE(r.ok());
  CHECK(r.cells[0].build.status == CellStatus::failed);
  CHECK(r.cells[0].smoke.status == SmokeStatus::skipped);
  CHECK(r.cells[1].publish.status == PublishStatus::published);
  CHECK(r.cells[1].ok());
  CHECK(r.cells[2].smoke.status == SmokeStatus::fail);
  CHECK(r.cells[2].publish.status == PublishStatus::skipped);
  CHECK(std::find(steps.calls.begin(), steps.calls.end(), "publish gpu") == steps.calls.end());
  CHECK(r.cells[2].gate.status == GateStatus::skipped);
  // Every smoke first (alone), then gate and publish of the cells that passed.
  CHECK(steps.calls ==
        std::vector<std::string>{"smoke cpu", "smoke gpu", "gate cpu", "publish cpu", "tag cpu-nightly-20261124"});
  CHECK(steps.extra_tags.at("cpu-nightly-20261124") == r.cells[1].publish.digest);
  CHECK(steps.inventories == std::vector<std::string>{"cpu"});  // the gate's scan, carried to publish
  CHECK(r.cells[1].publish.dated_tag == "cpu-nightly-20261124");
  CHECK(r.cells[2].publish.dated_tag.empty());
}

TEST_CASE("nightly: a dated tag that cannot be written leaves the cell published, the report without it") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("cpu", "cpu")};
  FakeEngine docker;
  FakeSteps steps;
  steps.tag_fails = true;
  StateStore store(f.root / "state");
  NightlyReport r = run_nightly(cells, f.options(), docker, store, &steps);
  CHECK(r.ok());
  CHECK(r.cells[0].publish.status == PublishStatus::published);
  CHECK(r.cells[0].publish.dated_tag.empty());
}

TEST_CASE("nightly: a cell whose contents contradict its claims is FAILED with the failed rows, never published") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("cpu", "cpu"), f.cell("lying", "cpu")};
  FakeEngine docker;
  FakeSteps steps;
  StateStore store(f.root / "state");
  NightlyReport r = run_nightly(cells, f.options(), docker, store, &steps);
  CHECK_FALSE(r.ok());
  CHECK(r.cells[0].ok());
  const NightlyCell& lying = r.cells[1];
  CHECK(lying.smoke.status == SmokeStatus::pass);
  CHECK(lying.gate.status == GateStatus::fail);
  CHECK(lying.gate.failed == std::vector<std::string>{"claims.paddle: expected 3.1.0, found 3.2.0"});
  CHECK(lying.publish.status == PublishStatus::skipped);
  CHECK_FALSE(lying.ok());
  CHECK(std::find(steps.calls.begin(), steps.calls.end(), "publish lying") == steps.calls.end());
  CHECK(render_markdown(r).find("claims.paddle: expected 3.1.0, found 3.2.0") != std::string::npos);
}

TEST_CASE("nightly: nothing changed → no build, smoke and gate verdicts reused, publish unchanged after one HEAD") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("cpu", "cpu")};
  FakeEngine docker;
  FakeSteps steps;
  StateStore store(f.root / "state");
  run_nightly(cells, f.options(), docker, store, &steps);
  steps.calls.clear();
  NightlyReport r = run_nightly(cells, f.options(), docker, store, &steps);
  CHECK(r.docker_builds == 0);
  CHECK(r.cells[0].smoke.status == SmokeStatus::cached);
  CHECK(r.cells[0].publish.status == PublishStatus::unchanged);
  CHECK(r.cells[0].gate.status == GateStatus::cached);
  CHECK(steps.calls == std::vector<std::string>{"head cpu", "tag cpu-nightly-20261124"});  // the day's tag: kept
  CHECK(r.ok());
  // A failed gate is never reused: the lying cell is gated again on every run.
  std::vector<GeneratedCell> lying = {f.cell("lying", "cpu")};
  run_nightly(lying, f.options(), docker, store, &steps);
  steps.calls.clear();
  auto again = run_nightly(lying, f.options(), docker, store, &steps);
  CHECK(again.cells[0].gate.status == GateStatus::fail);
  CHECK(steps.calls == std::vector<std::string>{"gate lying"});
  // The registry lost the tag: it is published again.
  steps.registry.clear();
  r = run_nightly(cells, f.options(), docker, store, &steps);
  CHECK(r.cells[0].publish.status == PublishStatus::published);
}

TEST_CASE("nightly: an unchanged digest whose smoke ran tonight gets tonight's evidence attested") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("cpu", "cpu")};
  FakeEngine docker;
  FakeSteps steps;
  steps.evidence = smoke::SmokeEvidence{.host = smoke::HostKind::none, .verdict = "pass", .time = "tonight"};
  StateStore store(f.root / "state");
  run_nightly(cells, f.options(), docker, store, &steps);
  CHECK(steps.attested.empty());  // published: the evidence went with the publish itself
  steps.calls.clear();
  auto opt = f.options();
  opt.fresh_smoke = true;  // the smoke runs again tonight; the digest is the same
  NightlyReport r = run_nightly(cells, opt, docker, store, &steps);
  CHECK(r.cells[0].publish.status == PublishStatus::unchanged);
  REQUIRE(steps.attested.count(r.cells[0].publish.digest) == 1);
  CHECK(steps.attested[r.cells[0].publish.digest].time == "tonight");
  CHECK(std::find(steps.calls.begin(), steps.calls.end(), "attest cpu") != steps.calls.end());
  // A cached smoke's evidence was attested the night it ran: nothing is attested again.
  steps.attested.clear();
  run_nightly(cells, f.options(), docker, store, &steps);
  CHECK(steps.attested.empty());
}

TEST_CASE("nightly: without the publish libraries every built cell fails with the reason") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("cpu", "cpu")};
  FakeEngine docker;
  StateStore store(f.root / "state");
  NightlyReport r = run_nightly(cells, f.options(), docker, store, nullptr, "publish: image/ library not available");
  CHECK_FALSE(r.ok());
  CHECK(r.cells[0].smoke.error == "publish: image/ library not available");
}

TEST_CASE("registry target: HOST:PORT/NS, an image::Reference; a cell's reference below it") {
  auto t = parse_registry("127.0.0.1:5000/ai");
  CHECK(t.host == "127.0.0.1:5000");
  CHECK(t.name == "ai");
  CHECK(t.transport == image::Transport::docker);
  matrix::Cell c;
  c.repository = "paddle";
  c.tag = "3.2.0";
  CHECK(cell_reference(t, c).within_transport() == "127.0.0.1:5000/ai/paddle:3.2.0");
  CHECK(cell_reference(parse_registry("docker://reg.example.com/team/ai/"), c).str() ==
        "docker://reg.example.com/team/ai/paddle:3.2.0");
  CHECK(cell_reference(parse_registry("reg.example.com:5000"), c).within_transport() ==
        "reg.example.com:5000/paddle:3.2.0");
  CHECK(parse_registry("reg.example.com:5000").repository() == "reg.example.com:5000");
  CHECK(cell_reference(t, c).below(t) == "paddle");  // under()'s inverse
  CHECK_FALSE(cell_reference(t, c).below(parse_registry("127.0.0.1:5000/other")));
  CHECK_THROWS_AS(parse_registry("/ai"), InputError);
  CHECK_THROWS_AS(parse_registry("127.0.0.1:5000/AI"), InputError);  // not a repository path
  c.repository = "Bad Repo";
  CHECK_THROWS_AS(cell_reference(t, c), InputError);
}

TEST_CASE("report: md/html/junit render; shard reports merge; a tag in two shards is refused") {
  Fixture f;
  FakeEngine docker;
  FakeSteps steps;
  StateStore store(f.root / "state");
  auto opt = f.options();
  std::vector<GeneratedCell> cells = {f.cell("cpu", "cpu"), f.cell("gpu", "gpu")};
  opt.shard = {1, 2};
  write_report(f.root / "r1", run_nightly(select_shard(cells, opt.shard), opt, docker, store, &steps));
  opt.shard = {2, 2};
  write_report(f.root / "r2", run_nightly(select_shard(cells, opt.shard), opt, docker, store, &steps));
  // Staged shards name their release registry: the merged report keeps it for `nightly promote`
  // (issue 31: the emitted promote job read a merged report without it and always exited 2).
  for (const char* shard : {"r1", "r2"}) {
    NightlyReport r = read_report(f.root / shard);
    r.release = "registry.example.com/ai";
    write_report(f.root / shard, r);
  }
  NightlyReport merged = merge_reports({f.root / "r1", f.root / "r2"}, f.root / "merged");
  CHECK(merged.release == "registry.example.com/ai");
  CHECK(read_report(f.root / "merged").release == "registry.example.com/ai");
  CHECK(!merged.started.empty());
  CHECK(merged.cells.size() == 2);
  CHECK(merged.shards == std::vector<std::string>{"1/2", "2/2"});
  CHECK_FALSE(merged.ok());
  CHECK(read_report(f.root / "merged").cells.size() == 2);  // the merged folder is written whole
  CHECK(fs::exists(f.root / "merged" / "report.html"));
  std::string html = render_html(merged), md = render_markdown(merged), junit = render_junit(merged);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("<polyline") != std::string::npos);  // the cpu cell's throughput
  CHECK(md.find("| gpu | built | fail | skipped | skipped |") != std::string::npos);
  CHECK(md.find("- throughput gemm: 2") != std::string::npos);
  CHECK(junit.find("tests=\"8\" failures=\"1\"") != std::string::npos);
  CHECK(junit.find("CPU-only") != std::string::npos);
  CHECK_THROWS_AS(merge_reports({f.root / "r1", f.root / "r1"}, f.root / "m2"), InputError);
  CHECK_THROWS_AS(merge_reports({f.root / "none"}, f.root / "m3"), InputError);
  // A truncated nightly.json: the error names the file.
  write_file_atomic(f.root / "bad" / "nightly.json", "{\"kind\": \"imgtool-nightly-report\", \"cells\": [");
  try {
    read_report(f.root / "bad");
    FAIL("a truncated report was read");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find((f.root / "bad" / "nightly.json").string()) != std::string::npos);
  }
  // Counts that are not integers (1e300 would be undefined behaviour as an int): the field, named.
  for (std::string bad : {"1e300", "2.5", "\"3\"", "99999999999"}) {
    CAPTURE(bad);
    write_file_atomic(f.root / "bad" / "nightly.json",
                      "{\"kind\": \"imgtool-nightly-report\", \"docker_builds\": " + bad + "}");
    try {
      read_report(f.root / "bad");
      FAIL("a report with docker_builds " << bad << " was read");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("field 'docker_builds' expected an integer, found ") != std::string::npos);
    }
  }
}

TEST_CASE("report folders are input: merge and collect read a cell's log only from that folder's logs/") {
  Fixture f;
  FakeEngine docker;
  FakeSteps steps;
  StateStore store(f.root / "state");
  std::vector<GeneratedCell> cells = {f.cell("cpu", "cpu"), f.cell("gpu", "gpu")};
  write_report(f.root / "shard", run_nightly(cells, f.options(), docker, store, &steps));
  REQUIRE(fs::exists(f.root / "shard" / "logs" / "cpu.log"));
  // A hostile shard: cpu's log names /etc/passwd; gpu's logs/ entry is a link out of the folder.
  json j = json::parse(read_file(f.root / "shard" / "nightly.json"));
  for (auto& c : j["cells"])
    if (c["tag"] == "cpu") c["build"]["log"] = "/etc/passwd";
  write_file_atomic(f.root / "shard" / "nightly.json", j.dump());
  fs::remove(f.root / "shard" / "logs" / "gpu.log");
  fs::create_symlink("/etc/passwd", f.root / "shard" / "logs" / "gpu.log");
  write_file_atomic(f.root / "shard" / "logs" / "stray.log", "not a cell's log");

  merge_reports({f.root / "shard"}, f.root / "merged");
  std::string passwd = read_file("/etc/passwd");
  for (auto& e : fs::directory_iterator(f.root / "merged" / "logs")) {
    CAPTURE(e.path());
    CHECK(read_file(e.path()) != passwd);  // before: logs/passwd and logs/gpu.log held /etc/passwd
  }
  CHECK_FALSE(fs::exists(f.root / "merged" / "logs" / "passwd"));
  CHECK_FALSE(fs::exists(f.root / "merged" / "logs" / "gpu.log"));
  CHECK_FALSE(fs::exists(f.root / "merged" / "logs" / "stray.log"));  // only the cells' logs are copied

  // A log the shard does hold, by name, is copied (wherever the shard's runner kept it).
  for (auto& c : j["cells"])
    if (c["tag"] == "cpu") c["build"]["log"] = "/home/runner/state/logs/cpu.log";
  write_file_atomic(f.root / "shard" / "nightly.json", j.dump());
  merge_reports({f.root / "shard"}, f.root / "merged2");
  CHECK(fs::exists(f.root / "merged2" / "logs" / "cpu.log"));

  // A tag that is not a tag (it names files) is refused, named.
  j["cells"][0]["tag"] = "../../x";
  write_file_atomic(f.root / "shard" / "nightly.json", j.dump());
  try {
    read_report(f.root / "shard");
    FAIL("a report with tag ../../x was read");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("cell tag: expected a Docker tag") != std::string::npos);
    CHECK(std::string(e.what()).find("'../../x'") != std::string::npos);
  }
}

TEST_CASE("nightly model: one to/from JSON round trip keeps every step and status") {
  Fixture f;
  FakeEngine docker;
  FakeSteps steps;
  StateStore store(f.root / "state");
  NightlyReport r = run_nightly({f.cell("cpu", "cpu"), f.cell("gpu", "gpu"), f.cell("lying", "cpu")}, f.options(),
                                docker, store, &steps);
  json j = r;
  NightlyReport back = j.get<NightlyReport>();
  CHECK(json(back) == j);
  CHECK(j["cells"][2]["gate"]["status"] == "fail");
  CHECK(back.cells[1].smoke.status == SmokeStatus::fail);
  json bad = j;
  bad["cells"][0]["publish"]["status"] = "maybe";
  CHECK_THROWS_AS(bad.get<NightlyReport>(), InputError);
}

TEST_CASE(
    "nightly --reproduce: the sample is N published cells in tag order from the day's place; the step round-trips") {
  NightlyReport r;
  for (const char* t : {"d", "a", "c", "b"}) {
    NightlyCell c;
    c.tag = t;
    c.publish.status = std::string(t) == "c" ? PublishStatus::failed : PublishStatus::published;
    r.cells.push_back(c);
  }
  auto tags = [&](const std::vector<size_t>& idx) {
    std::string s;
    for (size_t i : idx) s += r.cells[i].tag;
    return s;
  };
  // published, in tag order: a b d; day 20261206 -> 2026*372+12*31+6 = 754050, % 3 = 0
  CHECK(tags(reproduce_sample(r, 2, "20261206")) == "ab");
  CHECK(tags(reproduce_sample(r, 2, "20261207")) == "bd");   // the next day moves on
  CHECK(tags(reproduce_sample(r, 9, "20261207")) == "bda");  // never more than there are
  CHECK(reproduce_sample(r, 0, "20261207").empty());
  r.cells[0].reproduce = {"differs", "differ: sha256:a vs sha256:b\n  first differing layer: 1 (of 2 and 2)",
                          "sha256:b", 12.5};
  CHECK_FALSE(r.cells[0].ok());  // published, but not what the matrix builds
  NightlyReport back = json(r).get<NightlyReport>();
  CHECK(back.cells[0].reproduce.outcome == "differs");
  CHECK(back.cells[0].reproduce.seconds == 12.5);
  CHECK(back.cells[1].reproduce.outcome.empty());  // not sampled: no row, ok
  CHECK(back.cells[1].reproduce.ok());
  CHECK(render_markdown(r).find("- reproduce: differs (rebuilt with --no-cache in 12.5 s)\n  - differ: sha256:a") !=
        std::string::npos);
}

TEST_CASE("nightly -j 2: every smoke runs alone, before any gate; gates and publishes of two cells overlap") {
  struct Overlap : FakeSteps {
    std::recursive_mutex mu;  // FakeSteps::publish calls layers_of
    std::atomic<int> busy{0}, most{0};
    std::atomic<bool> smoke_beside_other_work{false};
    SmokeOutcome smoke(const GeneratedCell& g, const CellBuild& b) override {
      if (busy.load() != 0) smoke_beside_other_work = true;
      std::lock_guard lock(mu);
      return FakeSteps::smoke(g, b);
    }
    verify::GateResult gate(const GeneratedCell& g, const CellBuild& b) override {
      int now = ++busy;
      for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      --busy;
      std::lock_guard lock(mu);
      return FakeSteps::gate(g, b);
    }
    release::PublishResult publish(const GeneratedCell& g, const CellBuild& b, const smoke::SmokeEvidence* e,
                                   const sbom::Inventory* inventory) override {
      std::lock_guard lock(mu);
      return FakeSteps::publish(g, b, e, inventory);
    }
    void add_tag(const GeneratedCell& g, const std::string& d, const std::string& t) override {
      std::lock_guard lock(mu);
      FakeSteps::add_tag(g, d, t);
    }
    std::vector<LayerSize> layers_of(const GeneratedCell& g, const std::string& d) override {
      std::lock_guard lock(mu);
      return FakeSteps::layers_of(g, d);
    }
    std::string registry_digest(const GeneratedCell& g) override {
      std::lock_guard lock(mu);
      return FakeSteps::registry_digest(g);
    }
  };
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a", "cpu"), f.cell("b", "cpu"), f.cell("lying-c", "cpu")};
  FakeEngine docker;
  Overlap steps;
  StateStore store(f.root / "state");
  NightlyOptions o = f.options();
  o.build.jobs = 2;
  NightlyReport r = run_nightly(cells, o, docker, store, &steps);
  CHECK(r.cells[0].ok());
  CHECK(r.cells[1].ok());
  CHECK(r.cells[2].gate.status == GateStatus::fail);  // still gated, alone, before any publish of it
  CHECK(r.cells[2].publish.status == PublishStatus::skipped);
  CHECK_FALSE(steps.smoke_beside_other_work);
  CHECK(steps.most == 2);
  std::vector<std::string> first(steps.calls.begin(), steps.calls.begin() + 3);
  CHECK(first == std::vector<std::string>{"smoke a", "smoke b", "smoke lying-c"});
  for (const char* tag : {"a", "b"}) {  // each cell's own order: gate, publish, dated tag
    auto at = [&](const std::string& c) {
      return std::find(steps.calls.begin(), steps.calls.end(), c) - steps.calls.begin();
    };
    CHECK(at(std::string("gate ") + tag) < at(std::string("publish ") + tag));
  }
}

namespace {

// kb::FetchPage serving the recorded index (kb/testdata/index/) for http://127.0.0.1:9, edited by `edit`.
kb::FetchPage recorded_index(std::function<void(const std::string&, std::string&)> edit = {}) {
  return [edit](const std::string& url) {
    std::string rel = url.substr(std::string("http://127.0.0.1:9").size());
    fs::path file =
        imgtool::testing::source_dir() + "/kb/testdata/index" + rel + (rel.ends_with("/") ? "index.html" : "");
    if (!fs::exists(file)) return kb::Page{404, ""};
    kb::Page p{200, read_file(file)};
    if (edit) edit(url, p.body);
    return p;
  };
}

NightlyOptions kb_checked(NightlyOptions o, kb::FetchPage fetch) {
  o.today = "20261220";
  o.kb.check = true;
  o.kb.mirror = "http://127.0.0.1:9";
  o.kb.index = kb::mirror_options(o.kb.mirror);
  o.kb.index.fetch = std::move(fetch);
  return o;
}

}  // namespace

TEST_CASE("nightly report, KB: version, released day and age always; staleness only with --kb-check") {
  Fixture f;
  FakeEngine docker;
  FakeSteps steps;
  StateStore store(f.root / "state");
  NightlyOptions o = f.options();
  o.today = "20261220";
  NightlyReport r = run_nightly({f.cell("cpu", "cpu")}, o, docker, store, &steps);
  CHECK(r.kb.version == imgtool::testing::source_kb().version());
  CHECK(r.kb.released == imgtool::testing::source_kb().released());
  CHECK(r.kb.age_days == kb::days_between(r.kb.released, "2026-12-20", "t"));
  CHECK(r.kb.check == KbCheckStatus::not_checked);
  std::string line = "knowledge base " + r.kb.version + ", released " + r.kb.released + ", " +
                     std::to_string(r.kb.age_days) +
                     " day(s) old: staleness not checked (nightly --kb-check reads the package indexes)";
  CHECK(render_markdown(r).find(line + "\n") != std::string::npos);
  CHECK(render_html(r).find("<p class=\"kb\">" + line + "</p>") != std::string::npos);
  CHECK(render_markdown(r).find("## Knowledge base") == std::string::npos);
  json j = r;
  CHECK(j["kb"]["check"] == "not checked");
  CHECK(j["kb"]["age_days"] == r.kb.age_days);
  // A report from before the KB was in it reads as not checked, nothing known.
  j.erase("kb");
  NightlyReport old = j.get<NightlyReport>();
  CHECK(old.kb.version.empty());
  CHECK(old.kb.check == KbCheckStatus::not_checked);
  CHECK(render_markdown(old).find("knowledge base: not recorded") != std::string::npos);
  json bad = json(r);
  bad["kb"]["check"] = "fresh";
  CHECK_THROWS_WITH_AS(bad.get<NightlyReport>(),
                       doctest::Contains("field 'check' expected not checked|up to date|stale"), InputError);
}

TEST_CASE("nightly report, KB --kb-check: up to date, stale releases listed, pages not read, a malformed page") {
  Fixture f;
  FakeEngine docker;
  FakeSteps steps;
  StateStore store(f.root / "state");
  NightlyReport r =
      run_nightly({f.cell("cpu", "cpu")}, kb_checked(f.options(), recorded_index()), docker, store, &steps);
  CHECK(r.kb.check == KbCheckStatus::up_to_date);
  CHECK(r.kb.stale.empty());
  CHECK(r.kb.errors.empty());
  CHECK(r.kb.index == "http://127.0.0.1:9");
  CHECK(render_markdown(r).find("day(s) old: up to date with http://127.0.0.1:9\n") != std::string::npos);
  CHECK(r.ok());  // the KB is report detail: it never fails a cell

  auto stale = recorded_index([](const std::string& url, std::string& body) {
    if (!url.ends_with("/pypi/paddlepaddle/json")) return;
    json j = json::parse(body);
    j["releases"]["3.4.0"] = json::array({{{"upload_time_iso_8601", "2026-12-01T08:00:00Z"}, {"yanked", false}}});
    body = j.dump();
  });
  r = run_nightly({f.cell("cpu", "cpu")}, kb_checked(f.options(), stale), docker, store, &steps);
  CHECK(r.kb.check == KbCheckStatus::stale);
  REQUIRE(r.kb.stale.size() == 1);
  CHECK(r.kb.stale[0].find("paddlepaddle 3.4.0 (2026-12-01): a new series 3.4 (no release row) — ") == 0);
  std::string md = render_markdown(r), html = render_html(r);
  CHECK(md.find("day(s) old: 1 release(s) on http://127.0.0.1:9 that the KB lacks\n") != std::string::npos);
  CHECK(md.find("\n## Knowledge base\n\n- stale: paddlepaddle 3.4.0 (2026-12-01): a new series 3.4") !=
        std::string::npos);
  CHECK(html.find("<ul class=\"kb-stale\"><li>stale: paddlepaddle 3.4.0 (2026-12-01)") != std::string::npos);
  CHECK(json(r)["kb"]["stale"].size() == 1);
  CHECK(r.ok());

  auto offline = [](const std::string& url) -> kb::Page {
    if (url.find("/packages/stable/") != std::string::npos)
      throw image::HttpTransportError("GET " + url + ": Could not resolve host: www.paddlepaddle.org.cn", true, 6);
    return recorded_index()(url);
  };
  r = run_nightly({f.cell("cpu", "cpu")}, kb_checked(f.options(), offline), docker, store, &steps);
  CHECK(r.kb.check == KbCheckStatus::incomplete);
  CHECK(r.kb.errors.size() == 9);
  md = render_markdown(r);
  CHECK(md.find("day(s) old: nothing stale on the pages of http://127.0.0.1:9 read; 9 page(s) not read\n") !=
        std::string::npos);
  CHECK(md.find("- not read: paddlepaddle-gpu (cu126): GET http://127.0.0.1:9/packages/stable/cu126/paddlepaddle-gpu/: "
                "Could not "
                "resolve host") != std::string::npos);

  auto malformed = recorded_index([](const std::string& url, std::string& body) {
    if (url.ends_with("/pypi/nvidia-npp/json")) body = "<html>proxy error</html>";
  });
  r = run_nightly({f.cell("cpu", "cpu")}, kb_checked(f.options(), malformed), docker, store, &steps);
  CHECK(r.kb.check == KbCheckStatus::error);
  REQUIRE(r.kb.errors.size() == 1);
  CHECK(r.kb.errors[0].find(
            "http://127.0.0.1:9/pypi/nvidia-npp/json: expected PyPI's JSON API answer for nvidia-npp") == 0);
  CHECK(render_markdown(r).find("day(s) old: not checked: http://127.0.0.1:9/pypi/nvidia-npp/json: expected") !=
        std::string::npos);
  CHECK(r.ok());
  // Shards: the merged report keeps the KB section of a shard that checked it.
  write_report(f.root / "s1", run_nightly({f.cell("cpu", "cpu")}, f.options(), docker, store, &steps));
  write_report(f.root / "s2",
               run_nightly({f.cell("gpu", "gpu")}, kb_checked(f.options(), recorded_index()), docker, store, &steps));
  CHECK(merge_reports({f.root / "s1", f.root / "s2"}, f.root / "merged").kb.check == KbCheckStatus::up_to_date);
}

TEST_CASE("throughput points are typed: the report's JSON round-trips, an older nested record is read") {
  ThroughputPoint p{.metric = "gemm_fp16",
                    .unit = "TFLOP/s",
                    .gpu = "NVIDIA H200",
                    .driver = "580.159.04",
                    .value = 789.96,
                    .status = CheckStatus::kWarn,
                    .floor = 296.7,
                    .history_runs = 2,
                    .notes = {"below the median"},
                    .history = {{1, 780.0}, {2, 795.5}}};
  json j = p;
  CHECK(j["status"] == "warn");
  CHECK(j["median"].is_null());
  auto back = j.get<ThroughputPoint>();
  CHECK(json(back) == j);
  json old = {{"record", {{"metric", "bandwidth_copy"}, {"value", 3808.7}, {"unit", "GB/s"}, {"gpu", "NVIDIA H200"}}},
              {"status", "fail"}};
  auto o = old.get<ThroughputPoint>();
  CHECK(o.metric == "bandwidth_copy");
  CHECK(o.value == 3808.7);
  CHECK(o.status == CheckStatus::kFail);
  CHECK_THROWS_AS((json{{"metric", "m"}, {"status", "great"}}.get<ThroughputPoint>()), InputError);
  CHECK_THROWS_AS((json{{"metric", "m"}, {"history_runs", 1e300}}.get<ThroughputPoint>()), InputError);
}

TEST_CASE("report: a gpu cell whose smoke passed without a GPU reads \"pass (no GPU)\", never a bare pass") {
  NightlyReport r;
  NightlyCell c;
  c.tag = "2.6.2-gpu";
  c.variant = "gpu";
  c.build.status = CellStatus::built;
  c.smoke.status = SmokeStatus::pass;
  c.smoke.evidence = smoke::SmokeEvidence{.host = smoke::HostKind::none, .verdict = "pass"};
  c.gate.status = GateStatus::pass;
  c.publish.status = PublishStatus::published;
  r.cells = {c};
  CHECK(render_markdown(r).find("| 2.6.2-gpu | built | pass (no GPU) | pass | published |") != std::string::npos);
  r.cells[0].smoke.evidence->host = smoke::HostKind::test_double;
  r.cells[0].smoke.status = SmokeStatus::cached;
  CHECK(render_markdown(r).find("| cached (test double) |") != std::string::npos);
  r.cells[0].variant = "cpu";
  CHECK(render_markdown(r).find("| 2.6.2-gpu | built | cached | pass |") != std::string::npos);
}
