// One smoke → record → judge, used by `imgtool smoke`, the nightly's smoke step
// and `imgtool verify`'s smoke part:
//
//   JudgedSmoke s = smoke_and_judge(smoke_options, record_options, engine);
//
// run_smoke() (smoke_runner.h) → records_from_probe() → record_and_judge()
// (records_judge.h) → apply_throughput() (a failed judgement fails the verdict).
//
// One rule for the records store: when the probe measured throughput and
// recording is on, a store that cannot be opened or written FAILS the smoke
// with the reason (an unjudged throughput is not a passing smoke); the fix
// names --records FILE (a writable SQLite file) or --no-record.
#pragma once
#include <string>
#include <vector>

#include "engine/engine.h"
#include "smoke/records_judge.h"
#include "smoke/smoke_runner.h"

namespace imgtool::smoke {

struct RecordOptions {
  bool record = true;   // store and judge throughput
  std::string records;  // empty: RecordStore::default_path()
  Clock clock;          // empty: system_clock()
  PeaksLookup peaks;    // the throughput floors (kb_peaks(kb) of the command's one KB); required when record
};

struct JudgedSmoke {
  SmokeResult result;  // verdict includes the throughput judgement
  std::vector<Judgement> throughput;
};

// The records file `o` names (its default when empty).
std::string records_path(const RecordOptions& o);

// Records and judges `res`'s throughput, folding failures (and a records-store
// failure, see above) into its verdict. Never throws.
std::vector<Judgement> record_and_judge_smoke(SmokeResult& res, const RecordOptions& o);

// run_smoke() + record_and_judge_smoke(). Throws as run_smoke() does.
JudgedSmoke smoke_and_judge(const SmokeOptions& so, const RecordOptions& ro, engine::Engine& docker);

}  // namespace imgtool::smoke
