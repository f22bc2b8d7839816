// One row of a judgement: the one model every check in imgtool reports in — `imgtool verify`
// (verify/report_model.h), the release gate (its failed rows), `imgtool doctor` (host/doctor.h)
// and the throughput verdicts (smoke/records_judge.h). Each renderer chooses its words; the
// status, the evidence and the fix are the same fields everywhere.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

namespace imgtool {

enum class CheckStatus { kPass, kFail, kWarn, kSkip };  // kWarn and kSkip do not fail a run
const char* status_name(CheckStatus s);                 // "pass", "fail", "warn", "skip"
// The same, but "ok" for a pass: the word doctor's table and the throughput records use.
inline const char* ok_name(CheckStatus s) { return s == CheckStatus::kPass ? "ok" : status_name(s); }

struct CheckRow {
  std::string id;     // stable, dotted: "signature", "claims.python", "doctor.nvidia-driver"
  std::string title;  // one short human line
  CheckStatus status = CheckStatus::kPass;
  std::string expected;
  std::string found;
  std::string fix;  // empty when passed
};

inline bool any_failed(const std::vector<CheckRow>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](auto& r) { return r.status == CheckStatus::kFail; });
}

}  // namespace imgtool
