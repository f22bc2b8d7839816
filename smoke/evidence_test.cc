// Hardware evidence (evidence.h) from real probe documents: the one recorded on an NVIDIA H100
// (probe/testdata/h100-probe.json, REPLAYED here: the test marks it so), a test-double run and a
// run without --gpus; the predicate's round trip and its strict reading.
#include "smoke/evidence.h"

#include <doctest/doctest.h>

#include "core/error.h"
#include "core/fs.h"
#include "smoke/smoke_runner.h"
#include "tests/test_dirs.h"

using namespace imgtool;
using namespace imgtool::smoke;
using nlohmann::json;

namespace {

json h100() { return json::parse(read_file(imgtool::testing::source_dir() + "/smoke/probe/testdata/h100-probe.json")); }

// The H100 document with its device replaced by imgtool's driver double (what tests/gpu_engine serves).
json test_double() {
  json p = h100();
  p["driver"]["devices"][0]["name"] = kTestDoubleDevice;
  p["driver"]["name"] = kTestDoubleDevice;
  return p;
}

const char* const kUuid = "GPU-5f0c8b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f";

std::vector<HostGpu> host_of_h100() { return {{kUuid, "NVIDIA H100 80GB HBM3", "580.159.04"}}; }

// The H100 document as a current probe reports a passing run of a gpu image: the device's UUID,
// Paddle ok with its result checks right on the GPU.
json passing_h100() {
  json p = h100();
  p["driver"]["devices"][0]["uuid"] = kUuid;
  p["paddle"] = {{"status", "ok"},
                 {"version", "3.2.0"},
                 {"compiled_with_cuda", true},
                 {"cuda", "12.6"},
                 {"checks", json::array({{{"op", "add"}, {"device", "gpu:0"}, {"ok", true}},
                                         {{"op", "relu"}, {"device", "gpu:0"}, {"ok", true}},
                                         {{"op", "matmul_fp16"}, {"device", "gpu:0"}, {"ok", true}}})}};
  p["verdict"] = {{"status", "pass"}, {"reasons", json::array()}, {"expect_variant", "gpu"}};
  return p;
}

std::vector<EvidenceDevice> devices(const json& p) { return evidence_from_probe(p, "").devices; }

json no_gpus() {
  json p = h100();
  p["driver"] = {{"status", "skipped"}, {"code", "no_gpus_flag"}, {"reason", "no --gpus"}};
  p["kernels"] = {{"status", "skipped"}, {"reason", "GPU part not run"}};
  return p;
}

}  // namespace

TEST_CASE("evidence from the probe's own report: hardware, test-double, none") {
  SmokeEvidence hw = evidence_from_probe(h100(), "replayed: smoke/probe/testdata/h100-probe.json");
  CHECK(hw.host == HostKind::hardware);
  REQUIRE(hw.devices.size() == 1);
  CHECK(hw.devices[0].name == "NVIDIA H100 80GB HBM3");
  CHECK(hw.devices[0].cc == "9.0");
  CHECK(hw.devices[0].driver == "580.159.04");
  CHECK(hw.devices[0].cuda_driver == "13.0");
  CHECK(hw.time == "2026-11-24T09:01:06Z");
  CHECK(hw.probe_version == "1");
  CHECK(hw.summary().find("hardware, 1× NVIDIA H100 80GB HBM3, driver 580.159.04, 2026-11-24") == 0);
  CHECK(hw.summary().find("[replayed: smoke/probe/testdata/h100-probe.json]") != std::string::npos);
  bool bandwidth = false;
  for (const auto& m : hw.metrics) bandwidth |= m.metric == "bandwidth_copy" && m.unit == "GB/s" && m.value > 2000;
  CHECK(bandwidth);
  bool kernels = false;
  for (const auto& s : hw.sections) kernels |= s.name == "kernels" && s.status == "ok";
  CHECK(kernels);

  SmokeEvidence fake = evidence_from_probe(test_double(), "");
  CHECK(fake.host == HostKind::test_double);
  CHECK_FALSE(fake.hardware_pass());
  CHECK(fake.summary().find("the GPU part never ran on hardware") != std::string::npos);

  SmokeEvidence none = evidence_from_probe(no_gpus(), "");
  CHECK(none.host == HostKind::none);
  CHECK(none.devices.empty());
  CHECK(none.summary().find("never ran") != std::string::npos);

  SmokeEvidence nothing = evidence_from_probe(json(), "");  // no probe report at all
  CHECK(nothing.host == HostKind::none);
}

TEST_CASE("evidence from a smoke result: argv, --gpus, --shm-size, profile; the kind from the run, not the document") {
  json result = {{"docker", {{"argv", {"docker", "run", "--rm", "--gpus", "all", "--shm-size", "8g", "img"}}}},
                 {"verdict", {{"status", "pass"}}},
                 {"expect", {{"variant", "gpu"}}},
                 {"run", to_json(RunFacts{.mode = GpuHost::gpu, .gpus_passed = true, .host_gpus = host_of_h100()})},
                 {"probe", passing_h100()}};
  SmokeEvidence e = evidence_from_result(result, "base");
  CHECK(e.gpus == "all");
  CHECK(e.shm_size == "8g");
  CHECK(e.profile == "base");
  CHECK(e.bound);
  CHECK(e.host == HostKind::hardware);
  CHECK(e.verdict == "pass");
  CHECK(e.hardware_pass());
  CHECK(e.checks.size() == 3);

  // The H100 recorded with --skip-paddle, its verdict edited to pass: imgtool recomputes it.
  json skipped = h100();
  skipped["verdict"]["status"] = "pass";
  skipped["driver"]["devices"][0]["uuid"] = kUuid;
  result["probe"] = skipped;
  SmokeEvidence edited = evidence_from_result(result, "base");
  CHECK(edited.host == HostKind::hardware);
  CHECK(edited.verdict == "fail");
  CHECK_FALSE(edited.hardware_pass());
  auto why = recheck_document(skipped, "gpu", HostKind::hardware);
  REQUIRE(why.size() == 2);
  CHECK(why[0] == "paddle: expected ok, found skipped: --skip-paddle");
  CHECK(why[1].find("paddle: no result checks in the document") == 0);
}

TEST_CASE("evidence from a typed smoke result (the nightly's) is the evidence from its JSON form") {
  SmokeResult r;
  r.argv = {"docker", "run", "--rm", "--gpus", "all", "--shm-size", "8g", "img"};
  r.verdict = "pass";
  r.expect_variant = "gpu";
  r.run = RunFacts{.mode = GpuHost::gpu, .gpus_passed = true, .host_gpus = host_of_h100()};
  r.probe = passing_h100();
  r.image.id = "sha256:" + std::string(64, 'a');
  SmokeEvidence typed = evidence_of_result(r, "base");
  CHECK(typed.hardware_pass());
  CHECK(typed.image == r.image.id);
  CHECK(to_predicate(typed) == to_predicate(evidence_from_result(r.to_json(), "base")));
  r.verdict = "fail";  // a failed run is never a pass, whatever the document says
  CHECK(evidence_of_result(r, "base").verdict == "fail");
  CHECK(to_predicate(evidence_of_result(r, "base")) == to_predicate(evidence_from_result(r.to_json(), "base")));
}

TEST_CASE("a smoke without --gpus whose image prints an H100 is host none; the document only lowers the kind") {
  json p = passing_h100();
  std::string why;
  CHECK(host_kind({.mode = GpuHost::gpu, .gpus_passed = false}, devices(p), true, &why) == HostKind::none);
  CHECK(why == "no --gpus on the run");
  SmokeEvidence e = evidence_of_run(p, {.mode = GpuHost::none, .gpus_passed = false}, "gpu");
  CHECK(e.host == HostKind::none);
  CHECK_FALSE(e.hardware_pass());
  CHECK(e.summary().find("none: the GPU part never ran (no --gpus on the run)") == 0);
  CHECK(host_kind({.mode = GpuHost::none, .gpus_passed = true}, devices(p), true, &why) == HostKind::none);
  CHECK(why == "--gpu-host none");
  CHECK(host_kind({.mode = GpuHost::test_double, .gpus_passed = true}, devices(p), true) == HostKind::test_double);
  // --gpus on a GPU host, but nothing outside the container vouches for the devices.
  CHECK(host_kind({.mode = GpuHost::gpu, .gpus_passed = true}, devices(p), true, &why) == HostKind::none);
  CHECK(why.find("nvidia-smi") != std::string::npos);
  // The host reports another GPU, or the same on another driver.
  std::vector<HostGpu> other{{"GPU-00000000-0000-0000-0000-000000000000", "NVIDIA H100 80GB HBM3", "580.159.04"}};
  CHECK(host_kind({.mode = GpuHost::gpu, .gpus_passed = true, .host_gpus = other}, devices(p), true, &why) ==
        HostKind::none);
  CHECK(why.find("is not one this host reports outside the container") != std::string::npos);
  std::vector<HostGpu> older{{kUuid, "NVIDIA H100 80GB HBM3", "570.86.15"}};
  CHECK(host_kind({.mode = GpuHost::gpu, .gpus_passed = true, .host_gpus = older}, devices(p), true, &why) ==
        HostKind::none);
  CHECK(why.find("runs driver 580.159.04 in the container but 570.86.15 on the host") != std::string::npos);
  CHECK(host_kind({.mode = GpuHost::gpu, .gpus_passed = true, .host_gpus = host_of_h100()}, devices(p), false, &why) ==
        HostKind::none);
  CHECK(host_kind({.mode = GpuHost::gpu, .gpus_passed = true, .host_gpus = host_of_h100()}, devices(p), true, &why) ==
        HostKind::hardware);
  // The document lowers: the same run whose probe saw imgtool's driver double.
  json dbl = passing_h100();
  dbl["driver"]["devices"][0]["name"] = kTestDoubleDevice;
  CHECK(evidence_of_run(dbl, {.mode = GpuHost::gpu, .gpus_passed = true, .host_gpus = host_of_h100()}, "gpu").host ==
        HostKind::test_double);
}

TEST_CASE("a pod's facts decide a collected document's kind: granted GPUs and the node's product label") {
  json p = passing_h100();
  PodFacts pod{"smoke-x-1", "gpu-node-7", "NVIDIA-H100-80GB-HBM3", "reg/ai/p@sha256:" + std::string(64, 'a'), 1, "n"};
  std::string why;
  RunFacts run{.mode = GpuHost::gpu, .gpus_passed = true, .pod = pod};
  CHECK(host_kind(run, devices(p), true, &why) == HostKind::hardware);
  run.pod->gpu_product = "NVIDIA-A100-SXM4-80GB";
  CHECK(host_kind(run, devices(p), true, &why) == HostKind::none);
  CHECK(why == "the probe saw 'NVIDIA H100 80GB HBM3' but node gpu-node-7 is labelled 'NVIDIA-A100-SXM4-80GB'");
  run.pod->gpu_product = "";
  CHECK(host_kind(run, devices(p), true, &why) == HostKind::none);
  run.pod->gpu_product = "NVIDIA-H100-80GB-HBM3";
  run.pod->gpus = 0;
  CHECK(host_kind(run, devices(p), true, &why) == HostKind::none);
}

TEST_CASE("the H100 run of Paddle 2.6.2 (no sm_90 code): wrong results behind a passing run_check fail the smoke") {
  // Replayed: Paddle's checks as recorded on a real H100 (smoke/probe/testdata/README.md), in the
  // H100 document with its paddle section as the probe reports it.
  json p = passing_h100();
  p["paddle"]["checks"] = json::array({{{"op", "add"},
                                        {"device", "gpu:0"},
                                        {"ok", false},
                                        {"expected", {1, 1.1428572, 1.2857143, 1.4285715}},
                                        {"found", {0, 0, 0, 0}}},
                                       {{"op", "matmul_fp32"}, {"device", "gpu:0"}, {"ok", true}},
                                       {{"op", "relu"},
                                        {"device", "gpu:0"},
                                        {"ok", false},
                                        {"expected", {0, 0, 0, 0}},
                                        {"found", {0.5, 0.5, 0.5, 0.5}}},
                                       {{"op", "conv2d"}, {"device", "gpu:0"}, {"ok", true}}});
  RunFacts run{.mode = GpuHost::gpu, .gpus_passed = true, .host_gpus = host_of_h100()};
  SmokeEvidence e = evidence_of_run(p, run, "gpu");
  CHECK(e.host == HostKind::hardware);
  CHECK(e.verdict == "fail");
  auto why = recheck_document(p, "gpu", HostKind::hardware);
  REQUIRE(why.size() == 2);
  CHECK(why[0] ==
        "paddle computes wrong results: add gpu:0 WRONG got [0,0,0,0] want [1,1.1428572,1.2857143,1.4285715]");
  CHECK(why[1].find("relu gpu:0 WRONG got [0.5,0.5,0.5,0.5] want [0,0,0,0]") != std::string::npos);
  CHECK(e.checks[1] == "matmul_fp32 gpu:0 ok");
  // A check that ran on the CPU is no GPU result.
  p["paddle"]["checks"] = json::array({{{"op", "add"}, {"device", "cpu"}, {"ok", true}}});
  CHECK(recheck_document(p, "gpu", HostKind::hardware) ==
        std::vector<std::string>{"paddle: check add ran on cpu, not on the GPU"});
}

TEST_CASE("a bare document is unbound: shown, never a hardware pass") {
  SmokeEvidence e = evidence_from_probe(passing_h100(), "probe document forged.json");
  CHECK(e.host == HostKind::hardware);  // what the document claims
  CHECK(e.verdict == "pass");
  CHECK_FALSE(e.bound);
  CHECK_FALSE(e.hardware_pass());
  CHECK(e.summary().find("(unbound: a bare document") != std::string::npos);
  // An attestation written before `bound` existed reads as unbound.
  json old = json::parse(to_predicate(e).dump());
  old.erase("bound");
  CHECK_FALSE(from_predicate(old).bound);
}

TEST_CASE("names from the image reach the summary as printable text (no bidi override, no ESC)") {
  json p = passing_h100();
  p["driver"]["devices"][0]["name"] = "H100\u202Egnp.exe\x1b[2J";
  SmokeEvidence e = evidence_from_probe(p, "");
  CHECK(e.summary().find("\\u202e") != std::string::npos);
  CHECK(e.summary().find('\x1b') == std::string::npos);
}

TEST_CASE("the predicate round-trips and is read strictly") {
  SmokeEvidence e = evidence_from_probe(h100(), "replayed: h100-probe.json");
  e.argv = {"docker", "run", "--gpus", "all"};
  SmokeEvidence back = from_predicate(json::parse(to_predicate(e).dump()));
  CHECK(to_predicate(back) == to_predicate(e));
  json p = json::parse(to_predicate(e).dump());
  p["host"] = "quantum";
  CHECK_THROWS_WITH_AS(from_predicate(p), doctest::Contains("expected host hardware, test-double or none"),
                       CheckFailed);
  p = json::parse(to_predicate(e).dump());
  p.erase("devices");
  CHECK_THROWS_WITH_AS(from_predicate(p), doctest::Contains("'devices'"), CheckFailed);
  CHECK_THROWS_AS(from_predicate(json::array()), CheckFailed);
}

TEST_CASE("evidence from the probe document recorded on a lent NVIDIA H200 (bench/gpu-probe.sh, 2026-11-26)") {
  json h200 = json::parse(read_file(imgtool::testing::source_dir() + "/smoke/probe/testdata/h200-probe.json"));
  SmokeEvidence e = evidence_from_probe(h200, "replayed: smoke/probe/testdata/h200-probe.json");
  CHECK(e.host == HostKind::hardware);
  REQUIRE(e.devices.size() == 1);
  CHECK(e.devices[0].name == "NVIDIA H200");
  CHECK(e.devices[0].cc == "9.0");
  CHECK(e.devices[0].driver == "580.159.04");
  CHECK(e.verdict == "fail");  // recorded with --skip-paddle (no image there): the probe's own verdict
  CHECK_FALSE(e.hardware_pass());
  CHECK(e.summary().find("hardware, 1× NVIDIA H200, driver 580.159.04, 2026-11-26 (verdict fail)") == 0);
}
