// Records: a real SQLite file; floors and history rules with injected values.
#include "smoke/records.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>

#include "core/fs.h"
#include "smoke/history_view.h"
#include "smoke/records_judge.h"
#include "tests/test_dirs.h"

using namespace imgtool::smoke;
using imgtool::CheckStatus;
namespace fs = std::filesystem;

namespace {

struct TempDb {
  fs::path dir = fs::temp_directory_path() / ("imgtool-records-" + std::to_string(::getpid()));
  std::string path = (dir / "sub" / "records.db").string();
  TempDb() { fs::remove_all(dir); }
  ~TempDb() { fs::remove_all(dir); }
};

const GpuPeaks kH100{"H100 SXM5 80GB", 3350, 67, 989};

Record rec(int64_t t, double v, const std::string& metric = "bandwidth_copy", const std::string& driver = "550.54") {
  return {t, "sha256:d" + std::to_string(t), "3.2.0-gpu", "NVIDIA H100 80GB HBM3", driver, metric, v, "GB/s"};
}

PeaksLookup fixed_peaks() {
  return [](std::string_view gpu) -> std::optional<GpuPeaks> {
    if (gpu.find("H100") != std::string_view::npos) return kH100;
    return std::nullopt;
  };
}

}  // namespace

TEST_CASE("store: creates folders and schema, queries series in time order, survives reopen") {
  TempDb t;
  {
    RecordStore s(t.path);
    s.add(rec(30, 3.0));
    s.add(rec(10, 1.0));
    s.add(rec(20, 2.0));
    s.add(rec(15, 9.0, "gemm_fp16"));
  }
  RecordStore s(t.path);
  auto all = s.query({"3.2.0-gpu", "", "", "bandwidth_copy"});
  REQUIRE(all.size() == 3);
  CHECK(all[0].time == 10);
  CHECK(all[2].value == 3.0);
  auto last2 = s.query({"3.2.0-gpu", "", "", "bandwidth_copy", INT64_MAX, 2});
  REQUIRE(last2.size() == 2);
  CHECK(last2[0].time == 20);
  CHECK(s.query({"other"}).empty());
  CHECK(s.query({"", "", "", "", 15}).size() == 1);
}

TEST_CASE("floor: a fraction of the KB peak; unknown GPU skips with a note") {
  auto ok = judge_record(rec(1, 2900), kH100, {});
  CHECK(ok.status == CheckStatus::kPass);
  CHECK(*ok.floor == doctest::Approx(0.6 * 3350));
  auto low = judge_record(rec(1, 1500), kH100, {});
  CHECK(low.status == CheckStatus::kFail);
  CHECK(low.notes[0].find("below the floor 2010.0") != std::string::npos);
  auto unknown = judge_record(rec(1, 10), std::nullopt, {});
  CHECK(unknown.status == CheckStatus::kPass);
  CHECK_FALSE(unknown.floor);
  CHECK(unknown.notes[0].find("not in the knowledge base") != std::string::npos);
  auto gemm = judge_record(rec(1, 250, "gemm_fp16"), kH100, {});
  CHECK(gemm.status == CheckStatus::kFail);  // floor 0.3 * 989 = 296.7
}

TEST_CASE("history: more than 10% below the median of the last 7 fails") {
  std::vector<double> earlier = {100, 3000, 3000, 3000, 3100, 2900, 3000, 3050};  // 100 falls out of the window
  auto j = judge_record(rec(9, 2750), kH100, earlier);
  CHECK(j.history_runs == 7);
  CHECK(*j.median == doctest::Approx(3000));
  CHECK(j.status == CheckStatus::kPass);  // 2750 >= 2700
  auto bad = judge_record(rec(9, 2650), kH100, earlier);
  CHECK(bad.status == CheckStatus::kFail);
  CHECK(bad.notes.back().find("more than 10.0% below the median 3000.0 of the last 7 runs") != std::string::npos);
  auto few = judge_record(rec(9, 2650), kH100, {3000, 3000});
  CHECK(few.status == CheckStatus::kPass);
  CHECK_FALSE(few.median);
}

TEST_CASE("record_and_judge: history per GPU and driver, stored after judging") {
  TempDb t;
  RecordStore s(t.path);
  for (int i = 0; i < 7; ++i) record_and_judge(s, {rec(i, 3000)}, fixed_peaks());
  auto drop = record_and_judge(s, {rec(10, 2500)}, fixed_peaks());
  CHECK(drop[0].status == CheckStatus::kFail);
  CHECK(drop[0].history_runs == 7);
  auto new_driver = record_and_judge(s, {rec(11, 2500, "bandwidth_copy", "560.28")}, fixed_peaks());
  CHECK(new_driver[0].status == CheckStatus::kPass);
  CHECK(new_driver[0].history_runs == 0);
  CHECK(s.query({"3.2.0-gpu"}).size() == 9);
}

TEST_CASE("records from a probe document") {
  auto probe = nlohmann::json::parse(R"({"driver": {"name": "NVIDIA H100 80GB HBM3", "driver_branch": null,
    "driver_cuda": "12.4"}, "metrics": [{"metric": "bandwidth_copy", "value": 3000.5, "unit": "GB/s"},
    {"metric": "sgemm", "value": 50, "unit": "TFLOP/s"}]})");
  auto r = records_from_probe(probe, "sha256:x", "t", 42);
  REQUIRE(r.size() == 2);
  CHECK(r[0].driver == "cuda-12.4");
  CHECK(r[1].value == 50);
  CHECK(records_from_probe(nlohmann::json::parse(R"({"metrics": []})"), "", "", 0).empty());
}

TEST_CASE("CPU baseline metrics are their own series; a drop below their history warns, never fails") {
  auto probe = nlohmann::json::parse(R"({"driver": {"status": "fail", "name": null}, "metrics": [
    {"metric": "cpu_matmul_fp32", "value": 40.5, "unit": "GFLOP/s", "device": "cpu: AMD EPYC 7B13"}]})");
  auto r = records_from_probe(probe, "sha256:x", "3.2.0", 42);
  REQUIRE(r.size() == 1);
  CHECK(r[0].gpu == "cpu: AMD EPYC 7B13");
  CHECK(r[0].driver.empty());
  TempDb t;
  RecordStore s(t.path);
  auto j = record_and_judge(s, r, kb_peaks());
  CHECK(!j[0].floor);  // no KB peak for a CPU
  CHECK(j[0].history_runs == 0);
  for (int i = 0; i < 4; ++i) {
    auto e = r[0];
    e.time = 100 + i;
    e.value = 40;
    record_and_judge(s, {e}, kb_peaks());
  }
  auto slow = r[0];
  slow.time = 200;
  slow.value = 20;
  // >10% below its own median: a warning, not a failure (a shared host's CPU is noisy, not the image's doing)
  auto judged = record_and_judge(s, {slow}, kb_peaks())[0];
  CHECK(judged.status == CheckStatus::kWarn);
  CHECK(judged.median == doctest::Approx(40));
  REQUIRE(judged.notes.size() == 1);
  CHECK(judged.notes[0].find("% below the median 40.0 of the last 5 runs") != std::string::npos);
  CHECK(judged.notes[0].find("warns, never fails") != std::string::npos);
  // the same drop on a GPU series fails
  Record gpu = slow;
  gpu.gpu = "NVIDIA H100 80GB HBM3", gpu.driver = "550", gpu.metric = "bandwidth_copy";
  for (int i = 0; i < 4; ++i) {
    gpu.time = 300 + i, gpu.value = 3000;
    record_and_judge(s, {gpu}, kb_peaks());
  }
  gpu.time = 400, gpu.value = 2200;
  CHECK(record_and_judge(s, {gpu}, kb_peaks())[0].status == CheckStatus::kFail);
}

TEST_CASE("history view: series per GPU/driver/metric, text and last N") {
  TempDb t;
  RecordStore s(t.path);
  for (int i = 0; i < 5; ++i) s.add(rec(1700000000 + i * 86400, 3000 + i));
  s.add(rec(1700000000, 700, "gemm_fp16"));
  auto h = history_json(s, {"3.2.0-gpu", "", "", 3});
  REQUIRE(h["series"].size() == 2);
  CHECK(h["series"][0]["metric"] == "bandwidth_copy");
  CHECK(h["series"][0]["points"].size() == 3);
  CHECK(h["series"][0]["points"][0]["time_utc"] == "2023-11-16T22:13:20Z");
  auto text = history_text(h);
  CHECK(text.find("bandwidth_copy on NVIDIA H100 80GB HBM3, driver 550.54 (3 runs, median 3003.0 GB/s)") !=
        std::string::npos);
  CHECK(history_text(history_json(s, {"nope"})).find("no records") != std::string::npos);
}

TEST_CASE("kb_peaks: device names resolve through the knowledge base (matrix/kb/gpus.yaml)") {
  auto peaks = kb_peaks();
  auto h100 = peaks("NVIDIA H100 80GB HBM3");
  REQUIRE(h100);
  CHECK(h100->bw_GBps > 1000);
  CHECK(h100->fp16_tensor_tflops > h100->fp32_tflops);
  CHECK_FALSE(peaks("Imaginary GPU 9000"));
}

TEST_CASE("a real H100's probe document: its series carry the device's name and pass the KB floors") {
  // smoke/probe/testdata/h100-probe.json: bench/gpu-probe.sh on a lent NVIDIA H100 80GB HBM3
  // (driver 580.159.04, CUDA 13.0, cuBLAS 13.1), 2026-11-24, Paddle skipped (none on that machine).
  auto probe = nlohmann::json::parse(
      imgtool::read_file(imgtool::testing::source_dir() + "/smoke/probe/testdata/h100-probe.json"));
  auto records = records_from_probe(probe, "sha256:h100", "bench", 1);
  REQUIRE(records.size() == 4);
  auto peaks = kb_peaks();
  auto h100 = peaks(records[0].gpu);
  REQUIRE(h100);  // the name the driver reports is the KB's own
  for (const auto& r : records) {
    CHECK(r.gpu == "NVIDIA H100 80GB HBM3");
    CHECK(r.driver == "580.159.04");
    auto j = judge_record(r, h100, {});
    CHECK_MESSAGE(j.status == CheckStatus::kPass, r.metric);
    REQUIRE(j.floor);
    // Real hardware reaches well above the deliberately low floors: at least 1.3x each.
    const std::string what = r.metric + " " + std::to_string(r.value);  // doctest takes one operand
    CHECK_MESSAGE(r.value >= 1.3 * *j.floor, what);
  }
}
