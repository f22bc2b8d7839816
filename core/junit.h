// One JUnit XML writer (the format CI systems read): a test suite of cases,
// each passed, failed (message + body) or skipped (message). Used by the
// nightly report and `imgtool verify --junit`.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace imgtool::junit {

enum class Outcome { kPassed, kFailed, kSkipped };

struct Case {
  std::string classname, name;
  std::optional<double> seconds;  // the time attribute, when known
  Outcome outcome = Outcome::kPassed;
  std::string message;  // failure/skipped message
  std::string body;     // failure text; for a passed case, <system-out>
};

struct Suite {
  std::string name;
  std::optional<double> seconds;
  std::vector<Case> cases;
};

// <?xml …?><testsuites><testsuite name tests failures skipped [time]>…</testsuite></testsuites>
std::string render(const Suite& suite);

}  // namespace imgtool::junit
