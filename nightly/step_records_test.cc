// nightly/step_records.h on the real SQLite store.
#include "nightly/step_records.h"

#include <doctest/doctest.h>

#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::builder;
using namespace imgtool::nightly;

TEST_CASE("the nightly's state records are typed: smoke, gate and publish round-trip through the SQLite store") {
  imgtool::testing::ScratchDir d("step-records");
  StateStore store(d.path / "state");
  SmokeStep passed{.status = SmokeStatus::pass, .seconds = 12.5, .reasons = {}, .warnings = {"shm 64 MB"}};
  passed.throughput = {
      {.metric = "gemm_fp16", .unit = "TFLOP/s", .gpu = "NVIDIA H200", .value = 790.0, .floor = 300.0}};
  record_smoke(store, "t1", "sha256:img|gpus=all", passed);
  auto cached = passed_smoke(store, "t1", "sha256:img|gpus=all");
  REQUIRE(cached);
  CHECK(cached->status == SmokeStatus::cached);  // a record is never a fresh pass
  CHECK(cached->seconds == 0);
  CHECK(cached->warnings == passed.warnings);
  REQUIRE(cached->throughput.size() == 1);
  CHECK(cached->throughput[0].metric == "gemm_fp16");
  CHECK(cached->throughput[0].value == 790.0);
  CHECK(cached->throughput[0].floor == 300.0);
  CHECK_FALSE(cached->throughput[0].median);
  CHECK_FALSE(passed_smoke(store, "t1", "sha256:img|gpus=0"));  // another key
  record_smoke(store, "t2", "k", {.status = SmokeStatus::fail, .reasons = {"no GPU"}});
  CHECK_FALSE(passed_smoke(store, "t2", "k"));  // only a pass is reused
  store.record_step({"smoke", "t3", "k", "pass", "{not json", 0});
  CHECK_FALSE(passed_smoke(store, "t3", "k"));  // unreadable: the smoke runs again

  record_gate(store, "t1", "sha256:img|kb=1", GateStatus::fail);
  CHECK_FALSE(gate_passed(store, "t1", "sha256:img|kb=1"));
  record_gate(store, "t1", "sha256:img|kb=1", GateStatus::pass);
  CHECK(gate_passed(store, "t1", "sha256:img|kb=1"));
  CHECK_FALSE(gate_passed(store, "t1", "sha256:img|kb=2"));

  CHECK_FALSE(last_publish(store, "t1", "reg/x:t1"));
  record_publish(store, "t1", "reg/x:t1", {"sha256:man", "sha256:img"});
  auto pub = last_publish(store, "t1", "reg/x:t1");
  REQUIRE(pub);
  CHECK(pub->digest == "sha256:man");
  CHECK(pub->image_id == "sha256:img");
}
