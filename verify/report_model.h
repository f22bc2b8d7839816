// The result of `imgtool verify`: one row per check, each saying what was
// expected, what was found and, when it failed, the likely fix. Rendered as a
// human table, JSON, or JUnit XML (report_render.h). The static checks and
// the GPU smoke part both append rows to the same Report.
#pragma once
#include <string>
#include <vector>

namespace imgtool::verify {

enum class Status { kPass, kFail, kWarn, kSkip };  // kWarn and kSkip do not fail the run
const char* status_name(Status s);                 // "pass", "fail", "warn", "skip"

struct CheckResult {
  std::string id;     // stable, dotted: "signature", "claims.python", "contents.cudnn"
  std::string title;  // one short human line
  Status status = Status::kPass;
  std::string expected;
  std::string found;
  std::string fix;  // empty when passed
};

struct Report {
  std::string image;   // the reference as given
  std::string digest;  // the manifest digest checked
  std::vector<CheckResult> checks;
  bool ok() const;  // no kFail
  void add(CheckResult c) { checks.push_back(std::move(c)); }
};

}  // namespace imgtool::verify
