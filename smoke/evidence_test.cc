// Hardware evidence (evidence.h) from real probe documents: the one recorded on an NVIDIA H100
// (probe/testdata/h100-probe.json, REPLAYED here: the test marks it so), a test-double run and a
// run without --gpus; the predicate's round trip and its strict reading.
#include "smoke/evidence.h"

#include <doctest/doctest.h>

#include "core/error.h"
#include "core/fs.h"
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

TEST_CASE("evidence from a smoke result: the docker argv, --gpus, --shm-size, profile and imgtool's verdict") {
  json result = {{"docker", {{"argv", {"docker", "run", "--rm", "--gpus", "all", "--shm-size", "8g", "img"}}}},
                 {"verdict", {{"status", "pass"}}},
                 {"probe", h100()}};
  SmokeEvidence e = evidence_from_result(result, "base");
  CHECK(e.gpus == "all");
  CHECK(e.shm_size == "8g");
  CHECK(e.profile == "base");
  CHECK(e.verdict == "pass");  // the probe said fail (--skip-paddle); imgtool's judgement is what passed
  CHECK(e.hardware_pass());
  CHECK(e.source.empty());
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
