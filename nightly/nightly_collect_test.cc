// `nightly collect` (nightly_collect.h): probe documents from Kubernetes Jobs
// folded into a nightly report and the records store through the same
// judgement `imgtool smoke` uses. The documents come from the real probe.py,
// run here against the fake libcuda.so.1 (smoke/probe/testdata, the GPU driver
// double: this host has no GPU; its kernels run on the host CPU, so the probe
// measures and reports real bandwidth under the double's device name). An H100's
// figures cannot be measured here, so the passing documents carry H100 metrics in
// the shape probe.py writes them.
#include "nightly/nightly_collect.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/process.h"
#include "nightly/report.h"
#include "smoke/evidence.h"
#include "smoke/records.h"
#include "smoke/records_judge.h"
#include "smoke/smoke_runner.h"
#include "tests/fixtures.h"
#include "tests/source_kb.h"

using namespace imgtool;
using namespace imgtool::builder;
using namespace imgtool::nightly;
namespace fs = std::filesystem;
namespace fx = imgtool::testing;
using json = nlohmann::json;

namespace {

const char* kTag = "3.2.0-gpu-cuda12.6-cudnn9.5";
const char* kDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
const char* kImageId = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";

std::string utc_now() { return smoke::utc_text(std::time(nullptr)); }

// The claims of kTag's image, as the report's cell and the image's identity file carry them.
matrix::LabelClaims claims() {
  matrix::LabelClaims c;
  c.tag = kTag, c.variant = "gpu", c.cuda = "12.6", c.cudnn = "9.5", c.paddle = "3.2.0", c.python = "3.11";
  return c;
}

// A probe document (text from the real probe) made about kTag's image: its identity file, a GPU
// Paddle 3.2.0 for CUDA 12.6 on Python 3.11 with its result checks, started now; then printed as
// the probe prints it, between its sentinel lines.
json about_the_image(json p, const std::string& nonce = "") {
  p["identity"] = {{"path", "/etc/imgtool/identity.json"},
                   {"document", {{"tag", kTag}, {"claims", claims().claims()}}}};
  p["paddle"] = {{"status", "ok"},
                 {"version", "3.2.0"},
                 {"compiled_with_cuda", true},
                 {"cuda", "12.6"},
                 {"cudnn", "9.5.1"},
                 {"python", "3.11.2"},
                 {"checks", json::array({{{"op", "add"}, {"device", "gpu:0"}, {"ok", true}}})}};
  p["probe"]["started"] = utc_now();
  p["probe"]["nonce"] = nonce;
  return p;
}

std::string printed(const json& p) {
  return std::string(smoke::kDocumentBegin) + "\n" + p.dump(2) + "\n" + smoke::kDocumentEnd + "\n";
}

// The document between the sentinels of the real probe's output.
json document_of(const std::string& out) {
  auto text = smoke::probe_document_text(out, true);
  REQUIRE(text);
  return json::parse(*text);
}

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
  REQUIRE_MESSAGE(p.out.find(smoke::kDocumentBegin) != std::string::npos, p.out);
  return p.out;
}

fs::path report_with_cell(const fs::path& dir) {
  NightlyReport r;
  r.matrix = "matrix/paddle.yaml";
  r.registry = "registry.example.com/ai";
  r.gpus = "auto (no GPU host)";
  r.started = "2026-01-01T00:00:00Z";
  NightlyCell c;
  c.tag = kTag;
  c.image_id = kImageId;
  c.variant = "gpu";
  c.cuda = "12.6";
  c.cudnn = "9.5";
  c.paddle = "3.2.0";
  c.python = "3.11";
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
  // kubectl logs mixes the probe's stderr lines around the document: outside the sentinels, log.
  auto probe = about_the_image(document_of(doc));
  auto file =
      result(d.path / "results", kTag, "probe: starting {\"verdict\": \"pass\"}\n" + printed(probe) + "W: done\n");
  auto out = collect_results({.results = {file},
                              .from_report = rep,
                              .records = {.records = (d.path / "records.db").string(),
                                          .peaks = smoke::kb_peaks(imgtool::testing::source_kb())}});
  const auto& c = cell(out, kTag);
  CHECK(c.smoke.status == SmokeStatus::fail);
  CHECK(c.smoke.source == "collected: " + file.string());
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
    json p = about_the_image(document_of(doc));
    p["driver"]["name"] = "NVIDIA H100 80GB HBM3";
    p["driver"]["driver_branch"] = "550.54.15";
    p["metrics"] = json::array({{{"metric", "bandwidth_copy"}, {"value", copy_GBps}, {"unit", "GB/s"}}});
    p["verdict"] = {{"status", "pass"}, {"reasons", json::array()}, {"warnings", json::array()}};
    return printed(p);
  };
  std::string db = (d.path / "records.db").string();
  int64_t now = 1000;
  smoke::RecordOptions ro{
      .records = db, .clock = [&] { return now; }, .peaks = smoke::kb_peaks(imgtool::testing::source_kb())};
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
  CHECK(cell(out, kTag).smoke.error.find(junk.string() +
                                         ": expected the probe's document between its sentinel lines") == 0);

  auto stranger = result(d.path / "r", "9.9.9-gpu", "{}");
  CHECK_THROWS_WITH_AS(collect_results({.results = {junk, stranger}, .from_report = rep, .records = {.records = db}}),
                       doctest::Contains("found tag '9.9.9-gpu' not in it"), InputError);
  CHECK_FALSE(fs::exists(db));
  CHECK_THROWS_AS(collect_results({.results = {junk, junk}, .from_report = rep}), InputError);
  CHECK_THROWS_AS(collect_results({.results = {}, .from_report = rep}), InputError);
  CHECK_THROWS_AS(collect_results({.results = {junk}, .from_report = d.path / "nowhere"}), InputError);
}

namespace {

// What collect.sh saves beside a Job's log from the API server: the pod list, the node, tonight's nonce.
// The probe line is the container's `command`, as the emitted Job has it (a pod read only `args`
// for the nonce and found none in every real Job: the end-to-end test found it).
void pod_files(const fs::path& log, const std::string& image_digest, const std::string& pod_nonce,
               const std::string& product, const std::string& nonce) {
  json pod = {{"kind", "List"},
              {"items",
               {{{"kind", "Pod"},
                 {"metadata", {{"name", "smoke-3-2-0-gpu-abc"}}},
                 {"spec",
                  {{"nodeName", "gpu-node-1"},
                   {"containers",
                    {{{"command",
                       {"python3", "/imgtool-probe/probe.py", "--nonce", pod_nonce}},  // as emit/k8s_jobs.cc writes it
                      {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}}}}},
                 {"status",
                  {{"containerStatuses",
                    {{{"imageID", "docker-pullable://registry.example.com/ai/paddle@" + image_digest}}}}}}}}}};
  json node = {{"metadata", {{"name", "gpu-node-1"}, {"labels", {{"nvidia.com/gpu.product", product}}}}}};
  fs::path p = log;
  write_file_atomic(p.replace_extension(".pod"), pod.dump());
  write_file_atomic(p.replace_extension(".node"), node.dump());
  write_file_atomic(p.replace_extension(".nonce"), nonce + "\n");
}

// The H100 as a passing run of the image reports it: every GPU section ok, Paddle's checks right.
json h100_pass(const std::string& nonce) {
  json p = about_the_image(
      json::parse(read_file(fx::source_dir() + "/smoke/probe/testdata/h100-host-probe-skip-paddle.json")), nonce);
  p["libraries"]["cudart"]["version"] = "12.6";
  p["verdict"] = {{"status", "pass"}, {"reasons", json::array()}, {"expect_variant", "gpu"}};
  return p;
}

}  // namespace

TEST_CASE("collect: a document bound to its pod is hardware evidence; its node, pod and nonce are in the predicate") {
  fx::ScratchDir d("collect-pod");
  auto rep = report_with_cell(d.path / "report");
  auto file = result(d.path / "r", kTag, printed(h100_pass("n-tonight")));
  pod_files(file, kDigest, "n-tonight", "NVIDIA-H100-80GB-HBM3", "n-tonight");
  auto out = collect_results({.results = {file}, .from_report = rep, .records = {.record = false}});
  const auto& c = cell(out, kTag);
  REQUIRE_MESSAGE(c.smoke.status == SmokeStatus::pass, c.smoke.error, c.smoke.reasons);
  REQUIRE(c.smoke.evidence);
  const smoke::SmokeEvidence& e = *c.smoke.evidence;
  CHECK(e.bound);
  CHECK(e.host == smoke::HostKind::hardware);
  CHECK(e.hardware_pass());
  REQUIRE(e.pod);
  CHECK(e.pod->node == "gpu-node-1");
  CHECK(e.pod->gpu_product == "NVIDIA-H100-80GB-HBM3");
  CHECK(e.pod->gpus == 1);
  CHECK(e.nonce == "n-tonight");
  CHECK(smoke::to_predicate(e)["pod"]["image_id"] ==
        "docker-pullable://registry.example.com/ai/paddle@" + std::string(kDigest));
  // Without the pod's facts the same document is unbound: shown, never a hardware pass.
  auto bare = result(d.path / "bare", kTag, printed(h100_pass("")));
  auto out2 = collect_results({.results = {bare}, .from_report = rep, .records = {.record = false}});
  REQUIRE(cell(out2, kTag).smoke.evidence);
  smoke::SmokeEvidence e2 = *cell(out2, kTag).smoke.evidence;
  CHECK_FALSE(e2.bound);
  CHECK_FALSE(e2.hardware_pass());
  CHECK(e2.host_why.find("no pod facts") == 0);
}

TEST_CASE("collect refuses: another run's nonce, a pod of another digest, a host-recorded document, no sentinels") {
  fx::ScratchDir d("collect-refuse");
  auto rep = report_with_cell(d.path / "report");
  auto refused = [&](const fs::path& file) {
    auto out = collect_results({.results = {file}, .from_report = rep, .records = {.record = false}});
    const auto& c = cell(out, kTag);
    CHECK(c.smoke.status == SmokeStatus::error);
    CHECK_FALSE(c.smoke.evidence);  // nothing to attest
    CHECK_FALSE(out.ok());
    return c.smoke.error;
  };
  SUBCASE("a document without the Job's nonce (yesterday's log)") {
    auto f = result(d.path / "a", kTag, printed(h100_pass("n-yesterday")));
    pod_files(f, kDigest, "n-tonight", "NVIDIA-H100-80GB-HBM3", "n-tonight");
    CHECK(refused(f).find("nonce: the document echoes 'n-yesterday', the run was given 'n-tonight'") !=
          std::string::npos);
  }
  SUBCASE("a pod of another run") {
    auto f = result(d.path / "b", kTag, printed(h100_pass("n-yesterday")));
    pod_files(f, kDigest, "n-yesterday", "NVIDIA-H100-80GB-HBM3", "n-tonight");
    CHECK(refused(f).find("was given --nonce 'n-yesterday', tonight's Job 'n-tonight'") != std::string::npos);
  }
  SUBCASE("a pod whose image ID is another digest") {
    auto f = result(d.path / "c", kTag, printed(h100_pass("n")));
    pod_files(f, "sha256:" + std::string(64, '2'), "n", "NVIDIA-H100-80GB-HBM3", "n");
    CHECK(refused(f).find("not the published digest " + std::string(kDigest)) != std::string::npos);
  }
  SUBCASE("the H100 host's own document (CUDA 13.0, Python 3.12, no Paddle), verdict edited to pass") {
    json host = json::parse(read_file(fx::source_dir() + "/smoke/probe/testdata/h100-host-probe-skip-paddle.json"));
    host["verdict"]["status"] = "pass";
    auto why = refused(result(d.path / "d", kTag, printed(host)));
    CHECK(why.find("the document is not about " + std::string(kTag) + "@" + kDigest) != std::string::npos);
    CHECK(why.find("identity: the document carries no /etc/imgtool/identity.json") != std::string::npos);
    CHECK(why.find("paddle: the document reports no Paddle (skipped)") != std::string::npos);
    CHECK(why.find("the loaded cudart: the document says '13.0', the image claims '12.6'") != std::string::npos);
  }
  SUBCASE("a bare document without the probe's sentinel lines") {
    CHECK(refused(result(d.path / "e", kTag, h100_pass("").dump()))
              .find("expected the probe's document between its sentinel lines") != std::string::npos);
  }
}

TEST_CASE("collect: a Job's log over 4 MiB is refused before anything is read or recorded") {
  fx::ScratchDir d("collect-big");
  auto rep = report_with_cell(d.path / "report");
  auto big = result(d.path / "r", kTag, std::string((4u << 20) + 1, '['));
  CHECK_THROWS_WITH_AS(collect_results({.results = {big}, .from_report = rep}),
                       doctest::Contains("expected a probe result of at most 4194304 bytes"), InputError);
  auto text = std::string(smoke::kDocumentBegin) + "\n" + std::string(150000, '[') + std::string(150000, ']') + "\n" +
              smoke::kDocumentEnd + "\n";
  auto nested = result(d.path / "t", kTag, text);
  auto out = collect_results({.results = {nested}, .from_report = rep, .records = {.record = false}});
  CHECK(cell(out, kTag).smoke.status == SmokeStatus::error);
}
