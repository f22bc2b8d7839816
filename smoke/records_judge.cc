#include "smoke/records_judge.h"

#include <algorithm>
#include <cstdio>

#include "matrix/kb.h"

namespace imgtool::smoke {
namespace {

using nlohmann::json;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A string field, or "" when missing or not a string (the probe writes null for unknowns).
std::string text(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

const FloorRule* floor_rule(const std::string& metric) {
  for (auto& r : floor_rules())
    if (metric == r.metric) return &r;
  return nullptr;
}

void judge_floor(Judgement& j, const std::optional<GpuPeaks>& peaks) {
  const FloorRule* rule = floor_rule(j.record.metric);
  if (!rule) return;
  double peak = peaks ? (*peaks).*(rule->peak) : 0;
  if (peak <= 0) {
    j.notes.push_back("no floor: GPU '" + j.record.gpu + "' or its peak is not in the knowledge base");
    return;
  }
  j.floor = rule->fraction * peak;
  if (j.record.value >= *j.floor) return;
  j.status = CheckStatus::kFail;
  j.notes.push_back(j.record.metric + " " + num(j.record.value) + " " + j.record.unit + " is below the floor " +
                    num(*j.floor) + " (" + num(rule->fraction * 100) + "% of the " + peaks->model + " peak " +
                    num(peak) + ")");
}

void judge_history(Judgement& j, const std::vector<double>& earlier, const HistoryPolicy& p) {
  std::vector<double> last(earlier.end() - std::min<size_t>(earlier.size(), p.window), earlier.end());
  j.history_runs = static_cast<int>(last.size());
  if (j.history_runs < p.min_runs) {
    j.notes.push_back("no history judgement: " + std::to_string(j.history_runs) +
                      " earlier run(s) on this GPU and "
                      "driver, " +
                      std::to_string(p.min_runs) + " needed");
    return;
  }
  j.median = median(last);
  if (j.record.value >= (1 - p.max_drop) * *j.median) return;
  std::string drop = j.record.metric + " " + num(j.record.value) + " " + j.record.unit + " is more than " +
                     num(p.max_drop * 100) + "% below the median " + num(*j.median) + " of the last " +
                     std::to_string(j.history_runs) + " runs on " + j.record.gpu;
  if (is_host_cpu_series(j.record)) {  // a warning, not a failure: see records_judge.h
    j.status = CheckStatus::kWarn;
    j.notes.push_back(drop + " (a CPU baseline warns, never fails: the host CPU is shared)");
    return;
  }
  j.status = CheckStatus::kFail;
  j.notes.push_back(drop + ", driver " + j.record.driver);
}

}  // namespace

bool is_host_cpu_series(const Record& r) { return r.driver.empty() && r.gpu.rfind("cpu:", 0) == 0; }

// Fractions: bandwidth kernels reach 80-92% of the datasheet peak on healthy
// GPUs (probe_facts.md §5), below ~60% is suspect. cuBLAS FP16-in/FP32-compute
// GEMMs reach 60-80% of the dense tensor peak on datacenter parts, but GeForce
// parts run FP32 accumulation at half the listed FP16 rate, hence 0.3.
const std::vector<FloorRule>& floor_rules() {
  static const std::vector<FloorRule> rules = {
      {"bandwidth_copy", &GpuPeaks::bw_GBps, 0.60},
      {"bandwidth_triad", &GpuPeaks::bw_GBps, 0.60},
      {"gemm_fp16", &GpuPeaks::fp16_tensor_tflops, 0.30},
      {"sgemm", &GpuPeaks::fp32_tflops, 0.50},
      {"paddle_matmul_fp16", &GpuPeaks::fp16_tensor_tflops, 0.25},
  };
  return rules;
}

namespace {
std::optional<GpuPeaks> peaks_in(const matrix::KnowledgeBase& kb, std::string_view gpu) {
  const matrix::GpuSpec* g = kb.find_gpu(gpu);
  if (!g) return std::nullopt;
  return GpuPeaks{g->name, g->bw_GBps, g->fp32_tflops, g->fp16_tensor_tflops};
}
}  // namespace

PeaksLookup kb_peaks() {
  auto kb = std::make_shared<std::optional<matrix::KnowledgeBase>>();
  try {
    *kb = matrix::KnowledgeBase::load_default();
  } catch (const std::exception&) {
    // An unloadable KB means unknown peaks; judge_record says so per metric.
  }
  return [kb](std::string_view gpu) -> std::optional<GpuPeaks> {
    return kb->has_value() ? peaks_in(**kb, gpu) : std::nullopt;
  };
}

PeaksLookup kb_peaks(const matrix::KnowledgeBase& kb) {
  return [&kb](std::string_view gpu) { return peaks_in(kb, gpu); };
}

Judgement judge_record(const Record& r, const std::optional<GpuPeaks>& peaks, const std::vector<double>& earlier,
                       const HistoryPolicy& policy) {
  Judgement j;
  j.record = r;
  judge_floor(j, peaks);
  judge_history(j, earlier, policy);
  return j;
}

std::vector<Judgement> record_and_judge(RecordStore& store, const std::vector<Record>& records,
                                        const PeaksLookup& peaks, const HistoryPolicy& policy) {
  std::vector<Judgement> out;
  for (const Record& r : records) {
    std::vector<double> earlier;
    for (auto& e : store.query({r.tag, r.gpu, r.driver, r.metric, INT64_MAX, policy.window}))
      earlier.push_back(e.value);
    out.push_back(judge_record(r, peaks ? peaks(r.gpu) : std::nullopt, earlier, policy));
    store.add(r);
  }
  return out;
}

std::vector<Record> records_from_probe(const json& probe, const std::string& digest, const std::string& tag,
                                       int64_t time) {
  std::vector<Record> out;
  if (!probe.is_object() || !probe.contains("metrics") || !probe.contains("driver")) return out;
  const json& d = probe["driver"];
  std::string gpu = text(d, "name");
  std::string driver = text(d, "driver_branch");
  if (driver.empty()) driver = "cuda-" + text(d, "driver_cuda");
  // A metric measured elsewhere than the GPU (the CPU baseline: "device": "cpu: <model>") is its own
  // series under that device, with no driver: no KB peak matches it, so only its history judges it.
  for (auto& m : probe["metrics"])
    if (m.contains("value") && m["value"].is_number()) {
      std::string dev = text(m, "device");
      out.push_back({time, digest, tag, dev.empty() ? gpu : dev, dev.empty() ? driver : "", text(m, "metric"),
                     m["value"].get<double>(), text(m, "unit")});
    }
  return out;
}

const char* verdict_word(CheckStatus s) { return ok_name(s); }

json Judgement::to_json() const {
  json j = {{"metric", record.metric},        {"value", record.value}, {"unit", record.unit},
            {"status", verdict_word(status)}, {"gpu", record.gpu},     {"driver", record.driver},
            {"history_runs", history_runs},   {"notes", notes}};
  j["floor"] = floor ? json(*floor) : json(nullptr);
  j["median"] = median ? json(*median) : json(nullptr);
  return j;
}

}  // namespace imgtool::smoke
