#include "verify/report_render.h"

#include <algorithm>
#include <sstream>

#include "core/junit.h"
#include "core/strings.h"

namespace imgtool::verify {

bool Report::ok() const { return !any_failed(checks); }

namespace {

std::string detail(const CheckResult& c) {
  std::string d = "expected " + c.expected + "; found " + c.found;
  if (!c.fix.empty()) d += "; fix: " + c.fix;
  return d;
}

}  // namespace

std::string render_table(const Report& r) {
  size_t w = 5;
  for (const auto& c : r.checks) w = std::max(w, c.id.size());
  std::ostringstream o;
  using strings::printable;  // found/expected carry text from the image and the registry
  o << "verify " << printable(r.image) << (r.digest.empty() ? "" : " (" + printable(r.digest) + ")") << "\n";
  for (const auto& c : r.checks) {
    o << "  " << strings::upper(status_name(c.status))
      << std::string(5 - std::string(status_name(c.status)).size(), ' ') << c.id
      << std::string(w + 2 - c.id.size(), ' ') << "found " << printable(c.found) << "\n";
    if (c.status == Status::kFail || c.status == Status::kWarn) {
      o << "        expected: " << printable(c.expected) << "\n";
      if (!c.fix.empty()) o << "        fix:      " << printable(c.fix) << "\n";
    }
  }
  size_t fails = std::count_if(r.checks.begin(), r.checks.end(), [](auto& c) { return c.status == Status::kFail; });
  o << (fails == 0 ? "OK: all checks passed" : std::to_string(fails) + " check(s) FAILED") << "\n";
  return o.str();
}

nlohmann::json report_json(const Report& r) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : r.checks)
    checks.push_back({{"id", c.id},
                      {"title", c.title},
                      {"status", status_name(c.status)},
                      {"expected", strings::printable(c.expected)},
                      {"found", strings::printable(c.found)},
                      {"fix", strings::printable(c.fix)}});
  return {{"image", strings::printable(r.image)},
          {"digest", strings::printable(r.digest)},
          {"ok", r.ok()},
          {"checks", checks}};
}

std::string render_junit(const Report& r) {
  junit::Suite suite{"imgtool verify " + r.image, std::nullopt, {}};
  for (const auto& c : r.checks) {
    junit::Case jc{"imgtool.verify", c.id, std::nullopt, junit::Outcome::kPassed, "", c.found};
    if (c.status == Status::kFail) jc = {jc.classname, c.id, std::nullopt, junit::Outcome::kFailed, detail(c), c.title};
    if (c.status == Status::kSkip) jc = {jc.classname, c.id, std::nullopt, junit::Outcome::kSkipped, c.found, ""};
    suite.cases.push_back(std::move(jc));
  }
  return junit::render(suite);
}

}  // namespace imgtool::verify
