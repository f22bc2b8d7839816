#include "smoke/smoke_judge.h"

#include "core/error.h"
#include "smoke/smoke_report.h"

namespace imgtool::smoke {

std::string records_path(const RecordOptions& o) { return o.records.empty() ? RecordStore::default_path() : o.records; }

std::vector<Judgement> record_and_judge_smoke(SmokeResult& res, const RecordOptions& o) {
  if (!o.record) return {};
  auto recs = records_from_probe(res.probe, res.image.digest, res.image.tag, o.clock ? o.clock() : system_clock()());
  if (recs.empty()) return {};
  std::vector<Judgement> judged;
  try {
    RecordStore store(records_path(o));
    if (!o.peaks) throw Error("no throughput floors were handed down (RecordOptions::peaks)");
    judged = record_and_judge(store, recs, o.peaks);
  } catch (const std::exception& e) {
    res.verdict = "fail";
    res.reasons.push_back(std::string("throughput not recorded nor judged: ") + e.what() +
                          "; fix: --records FILE (a writable SQLite file) or --no-record");
    return {};
  }
  apply_throughput(res, judged);
  return judged;
}

JudgedSmoke smoke_and_judge(const SmokeOptions& so, const RecordOptions& ro, engine::Engine& docker) {
  JudgedSmoke out{run_smoke(so, docker), {}};
  out.throughput = record_and_judge_smoke(out.result, ro);
  return out;
}

}  // namespace imgtool::smoke
