// Judging throughput metrics: each against a floor per GPU model (a fraction
// of the peak in the knowledge base, matrix/kb/gpus.yaml) and against its own
// history (the last `window` runs of the same tag on the same GPU and driver).
//
// Floors are deliberately low: they catch gross failures (a kernel not using
// tensor cores, a throttled or misconfigured GPU); the history rule catches
// regressions between nightly builds. A CPU baseline's drop only warns
// (is_host_cpu_series below).
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/check_row.h"
#include "matrix/kb.h"
#include "smoke/records.h"

namespace imgtool::smoke {

// Peaks of one GPU model (dense, no sparsity); 0 = unknown.
struct GpuPeaks {
  std::string model;  // the knowledge base's name for it
  double bw_GBps = 0, fp32_tflops = 0, fp16_tensor_tflops = 0;
};

// GPU device name -> peaks; nullopt when the model is unknown.
using PeaksLookup = std::function<std::optional<GpuPeaks>(std::string_view gpu)>;

// Lookup through KnowledgeBase::load_default(), for tests (commands pass their one KB to
// kb_peaks(kb)); a KB that cannot be loaded
// behaves as "every model unknown" (floors are then skipped, with a reason).
PeaksLookup kb_peaks();
// Lookup in `kb`, the caller's one knowledge base (the CLI's); `kb` must outlive the lookup.
PeaksLookup kb_peaks(const matrix::KnowledgeBase& kb);

struct HistoryPolicy {
  int window = 7;          // runs in the median
  double max_drop = 0.10;  // fail when more than 10% below the median
  int min_runs = 3;        // fewer earlier runs: no history judgement yet
};

// Floor for a metric: this fraction of one peak. Unknown metrics have no floor.
struct FloorRule {
  const char* metric;
  double GpuPeaks::*peak;
  double fraction;
};
const std::vector<FloorRule>& floor_rules();

struct Judgement {
  Record record;
  // The verdict (core/check_row.h): pass, warn (a CPU baseline's drop) or fail; its JSON word is
  // "ok" | "warn" | "fail" (the records' and the reports' vocabulary).
  CheckStatus status = CheckStatus::kPass;
  std::optional<double> floor;   // value the metric must reach, if known
  std::optional<double> median;  // of earlier runs, if enough
  int history_runs = 0;
  std::vector<std::string> notes;  // why it failed, or why a rule was skipped
  nlohmann::json to_json() const;
};
const char* verdict_word(CheckStatus s);  // "ok", "warn", "fail"

// The probe's CPU baseline ("device": "cpu: <model>", no driver). It is judged against
// its own history only, and a drop is a warning ("warn"), never a failure: a host CPU's
// throughput is shared with whatever else runs there (a 2-core CI host running tests in
// parallel halves it) and says nothing about the image; the GPU series are the ones a
// release stands on.
bool is_host_cpu_series(const Record& r);

// Judges one new record. `earlier` holds values of earlier runs of the same series, oldest first.
Judgement judge_record(const Record& r, const std::optional<GpuPeaks>& peaks, const std::vector<double>& earlier,
                       const HistoryPolicy& policy = {});

// Judges each record against the store's earlier runs, then stores it.
std::vector<Judgement> record_and_judge(RecordStore& store, const std::vector<Record>& records,
                                        const PeaksLookup& peaks, const HistoryPolicy& policy = {});

// Records from a probe document (its "metrics" list and "driver" section).
// Empty when the GPU part did not run.
std::vector<Record> records_from_probe(const nlohmann::json& probe, const std::string& digest, const std::string& tag,
                                       int64_t time);

}  // namespace imgtool::smoke
