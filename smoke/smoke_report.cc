#include "smoke/smoke_report.h"

#include <cstdio>
#include <sstream>

namespace imgtool::smoke {
namespace {

using nlohmann::json;

const char* kSections[] = {"environment", "shm", "libraries", "driver", "compat", "kernels", "blas", "paddle"};

std::string field(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

void section_lines(std::ostringstream& o, const json& probe) {
  for (const char* name : kSections) {
    if (!probe.contains(name)) continue;
    const json& s = probe[name];
    char head[64];
    std::snprintf(head, sizeof head, "  %-12s %-8s ", name, field(s, "status").c_str());
    o << head << field(s, "reason") << "\n";
    if (!field(s, "fix").empty()) o << "  " << std::string(22, ' ') << "fix: " << field(s, "fix") << "\n";
  }
}

void throughput_lines(std::ostringstream& o, const std::vector<Judgement>& t) {
  if (t.empty()) return;
  o << "throughput:\n";
  for (auto& j : t) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-20s %10.1f %-8s %s", j.record.metric.c_str(), j.record.value,
                  j.record.unit.c_str(), verdict_word(j.status));
    o << line << "\n";
    for (auto& n : j.notes) o << "      " << n << "\n";
  }
}

}  // namespace

void apply_throughput(SmokeResult& res, const std::vector<Judgement>& throughput) {
  for (auto& j : throughput) {
    if (j.status == CheckStatus::kWarn)
      for (auto& n : j.notes) res.warnings.push_back("throughput: " + n);
    if (j.status != CheckStatus::kFail) continue;
    for (auto& n : j.notes) res.reasons.push_back("throughput: " + n);
    res.verdict = "fail";
  }
}

std::string smoke_text(const SmokeResult& res, const std::vector<Judgement>& throughput) {
  std::ostringstream o;
  o << "smoke " << res.image.ref << " (" << res.image.digest << ")\n";
  o << "  expected: variant " << (res.expect_variant.empty() ? "?" : res.expect_variant) << ", CUDA "
    << (res.expect_cuda.empty() ? "-" : res.expect_cuda) << "\n";
  if (res.host) {
    o << "host: docker run failed: " << res.host->summary << "\n  fix: " << res.host->fix << "\n";
    if (!res.host->evidence.empty()) o << "  docker said: " << res.host->evidence << "\n";
  }
  if (res.probe.is_object()) section_lines(o, res.probe);
  throughput_lines(o, throughput);
  o << "verdict: " << (res.passed() ? "PASS" : "FAIL") << "\n";
  for (auto& r : res.reasons) o << "  - " << r << "\n";
  for (auto& w : res.warnings) o << "  warning: " << w << "\n";
  return o.str();
}

}  // namespace imgtool::smoke
