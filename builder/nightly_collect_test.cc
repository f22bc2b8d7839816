// `nightly collect` (nightly_collect.h): probe documents from Kubernetes Jobs
// folded into a nightly report and the records store through the same
// judgement `imgtool smoke` uses. The documents come from the real probe.py,
// run here against the fake libcuda.so.1 (smoke/probe/testdata, the GPU driver
// double: this host has no GPU; its kernels run on the host CPU, so the probe
// measures and reports real bandwidth under the double's device name). An H100's
// figures cannot be measured here, so the passing documents carry H100 metrics in
// the shape probe.py writes them.
#include "builder/nightly_collect.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "builder/report.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/process.h"
#include "smoke/records.h"
#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::builder;
namespace fs = std::filesystem;
namespace fx = imgtool::testing;
using json = nlohmann::json;

namespace {

const char* kTag = "3.2.0-gpu-cuda12.6-cudnn9.5";
const char* kDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

// The real probe against the fake driver; "" when no C compiler is here to build it.
std::string real_probe_doc(const fs::path& scratch) {
  std::string cc = have_program("cc") ? "cc" : have_program("gcc") ? "gcc" : "";
  if (cc.empty()) return "";
  fs::path lib = scratch / "fakecuda";
  fs::create_directories(lib);
  auto b = run({cc, "-shared", "-fPIC", "-o", (lib / "libcuda.so.1").string(),
                fx::source_dir() + "/smoke/probe/testdata/fake_libcuda.c"});
  REQUIRE(b.ok());
  auto p = run({"python3", fx::source_dir() + "/smoke/probe/probe.py", "--skip-paddle", "--expect-variant", "gpu",
                "--expect-cuda", "12.6", "--gpus-requested", "1"},
               {.timeout = std::chrono::seconds(120), .env = {{"LD_LIBRARY_PATH", lib.string()}}});
  REQUIRE_MESSAGE(p.out.find("\"verdict\"") != std::string::npos, p.err);
  return p.out;
}

fs::path report_with_cell(const fs::path& dir) {
  NightlyReport r;
  r.matrix = "matrix/paddle.yaml";
  r.registry = "registry.example.com/ai";
  r.gpus = "auto (no GPU host)";
  NightlyCell c;
  c.tag = kTag;
  c.variant = "gpu";
  c.cuda = "12.6";
  c.build.status = CellStatus::built;
  c.smoke.status = SmokeStatus::pass;
  c.smoke.warnings = {"no GPU on this host: the GPU part was not run"};
  c.gate.status = GateStatus::pass;
  c.publish = {.status = PublishStatus::published,
               .ref = "registry.example.com/ai/paddle:" + std::string(kTag),
               .digest = kDigest};
  NightlyCell other = c;
  other.tag = "3.2.0";
  other.variant = "cpu";
  r.cells = {c, other};
  write_report(dir, r);
  return dir;
}

fs::path result(const fs::path& dir, const std::string& tag, const std::string& text) {
  fs::create_directories(dir);
  write_file_atomic(dir / (tag + ".json"), text);
  return dir / (tag + ".json");
}

const NightlyCell& cell(const NightlyReport& r, const std::string& tag) {
  for (auto& c : r.cells)
    if (c.tag == tag) return c;
  FAIL("no cell " << tag);
  throw 0;
}

}  // namespace

TEST_CASE("collect: the real probe's failing document fails the cell's smoke with the probe's own reasons") {
  fx::ScratchDir d("collect-fail");
  std::string doc = real_probe_doc(d.path);
  if (doc.empty()) {
    MESSAGE("SKIPPED: no C compiler to build the fake libcuda.so.1");
    return;
  }
  auto rep = report_with_cell(d.path / "report");
  // kubectl logs mixes the probe's stderr lines in front of the document: judged all the same.
  auto file = result(d.path / "results", kTag, "probe: starting\n" + doc);
  auto out = collect_results(
      {.results = {file}, .from_report = rep, .records = {.records = (d.path / "records.db").string()}});
  const auto& c = cell(out, kTag);
  CHECK(c.smoke.status == SmokeStatus::fail);
  CHECK(c.smoke.source == "collected: " + file.string());
  auto probe = json::parse(doc);
  CHECK(c.smoke.reasons == probe["verdict"]["reasons"].get<std::vector<std::string>>());
  CHECK_FALSE(c.smoke.reasons.empty());
  // The double's kernels really ran (on the host CPU): their bandwidth is in the store under the
  // double's device name, filed under the published digest, and judged (no KB peak: no floor).
  auto metrics = probe["metrics"];
  CHECK(c.smoke.throughput.size() == metrics.size());
  smoke::RecordStore store((d.path / "records.db").string());
  auto rows = store.query({.tag = kTag});
  CHECK(rows.size() == metrics.size());
  for (auto& row : rows) {
    CHECK(row.image_digest == kDigest);
    CHECK(row.gpu == probe["driver"]["name"].get<std::string>());
  }
  CHECK(c.publish.status == PublishStatus::published);          // the other steps stay as they were
  CHECK(cell(out, "3.2.0").smoke.status == SmokeStatus::pass);  // a cell without a result is untouched
  CHECK_FALSE(out.ok());
  write_report(d.path / "out", out);
  auto j = json::parse(read_file(d.path / "out" / "nightly.json"));
  CHECK(j["cells"][0]["tag"] == kTag);
  CHECK(j["cells"][0]["smoke"]["source"] == c.smoke.source);
  CHECK(j["cells"][0]["smoke"]["status"] == "fail");
  CHECK(j["ok"] == false);
  CHECK(read_file(d.path / "out" / "junit.xml").find(kTag) != std::string::npos);
}

TEST_CASE(
    "collect: GPU throughput goes to the records store and is judged (floor, history) as imgtool smoke judges it") {
  fx::ScratchDir d("collect-records");
  std::string doc = real_probe_doc(d.path);
  if (doc.empty()) {
    MESSAGE("SKIPPED: no C compiler to build the fake libcuda.so.1");
    return;
  }
  auto rep = report_with_cell(d.path / "report");
  // What the probe writes on an H100 that passed (the GPU part of the document is the double here).
  auto passing = [&](double copy_GBps) {
    json p = json::parse(doc);
    p["driver"]["name"] = "NVIDIA H100 80GB HBM3";
    p["driver"]["driver_branch"] = "550.54.15";
    p["metrics"] = json::array({{{"metric", "bandwidth_copy"}, {"value", copy_GBps}, {"unit", "GB/s"}}});
    p["verdict"] = {{"status", "pass"}, {"reasons", json::array()}, {"warnings", json::array()}};
    return p.dump();
  };
  std::string db = (d.path / "records.db").string();
  int64_t now = 1000;
  smoke::RecordOptions ro{.records = db, .clock = [&] { return now; }};
  for (double v : {2900.0, 2950.0, 3000.0, 2980.0}) {
    auto out =
        collect_results({.results = {result(d.path / "r", kTag, passing(v))}, .from_report = rep, .records = ro});
    const auto& c = cell(out, kTag);
    CHECK(c.smoke.status == SmokeStatus::pass);
    REQUIRE(c.smoke.throughput.size() == 1);
    CHECK(c.smoke.throughput[0].status == CheckStatus::kPass);
    CHECK(c.smoke.throughput[0].gpu == "NVIDIA H100 80GB HBM3");
    now += 86400;
  }
  smoke::RecordStore store(db);
  auto rows = store.query({.tag = kTag});
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].image_digest == kDigest);  // the published digest is what was smoked
  // A regression: >10% below the median of its history fails the cell, with the history in the report.
  auto out =
      collect_results({.results = {result(d.path / "r", kTag, passing(2000))}, .from_report = rep, .records = ro});
  const auto& c = cell(out, kTag);
  CHECK(c.smoke.status == SmokeStatus::fail);
  REQUIRE(c.smoke.throughput.size() == 1);
  CHECK(c.smoke.throughput[0].status == CheckStatus::kFail);
  CHECK(c.smoke.throughput[0].history.size() == 5);
  CHECK_FALSE(c.smoke.reasons.empty());
}

TEST_CASE("collect: a log without a probe document is an error naming the file; bad input records nothing") {
  fx::ScratchDir d("collect-bad");
  auto rep = report_with_cell(d.path / "report");
  std::string db = (d.path / "records.db").string();
  auto junk = result(d.path / "r", kTag, "Error from server (NotFound): pods \"smoke-x\" not found\n");
  auto out = collect_results({.results = {junk}, .from_report = rep, .records = {.records = db}});
  CHECK(cell(out, kTag).smoke.status == SmokeStatus::error);
  CHECK(cell(out, kTag).smoke.error.find(junk.string() + ": expected the probe's JSON document") == 0);

  auto stranger = result(d.path / "r", "9.9.9-gpu", "{}");
  CHECK_THROWS_WITH_AS(collect_results({.results = {junk, stranger}, .from_report = rep, .records = {.records = db}}),
                       doctest::Contains("found tag '9.9.9-gpu' not in it"), InputError);
  CHECK_FALSE(fs::exists(db));
  CHECK_THROWS_AS(collect_results({.results = {junk, junk}, .from_report = rep}), InputError);
  CHECK_THROWS_AS(collect_results({.results = {}, .from_report = rep}), InputError);
  CHECK_THROWS_AS(collect_results({.results = {junk}, .from_report = d.path / "nowhere"}), InputError);
}
