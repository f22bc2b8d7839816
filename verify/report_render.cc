#include "verify/report_render.h"

#include <algorithm>
#include <sstream>

namespace imgtool::verify {

const char* status_name(Status s) {
  switch (s) {
    case Status::kPass: return "pass";
    case Status::kFail: return "fail";
    case Status::kWarn: return "warn";
    case Status::kSkip: return "skip";
  }
  return "?";
}

bool Report::ok() const {
  return std::none_of(checks.begin(), checks.end(), [](auto& c) { return c.status == Status::kFail; });
}

namespace {

std::string upper(const char* s) {
  std::string u = s;
  for (auto& c : u) c = static_cast<char>(toupper(c));
  return u;
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  return o;
}

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
  o << "verify " << r.image << (r.digest.empty() ? "" : " (" + r.digest + ")") << "\n";
  for (const auto& c : r.checks) {
    o << "  " << upper(status_name(c.status)) << std::string(5 - std::string(status_name(c.status)).size(), ' ')
      << c.id << std::string(w + 2 - c.id.size(), ' ') << "found " << c.found << "\n";
    if (c.status == Status::kFail || c.status == Status::kWarn) {
      o << "        expected: " << c.expected << "\n";
      if (!c.fix.empty()) o << "        fix:      " << c.fix << "\n";
    }
  }
  size_t fails = std::count_if(r.checks.begin(), r.checks.end(), [](auto& c) { return c.status == Status::kFail; });
  o << (fails == 0 ? "OK: all checks passed" : std::to_string(fails) + " check(s) FAILED") << "\n";
  return o.str();
}

nlohmann::json report_json(const Report& r) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : r.checks)
    checks.push_back({{"id", c.id}, {"title", c.title}, {"status", status_name(c.status)},
                      {"expected", c.expected}, {"found", c.found}, {"fix", c.fix}});
  return {{"image", r.image}, {"digest", r.digest}, {"ok", r.ok()}, {"checks", checks}};
}

std::string render_junit(const Report& r) {
  size_t fails = 0, skips = 0;
  for (const auto& c : r.checks) {
    fails += c.status == Status::kFail;
    skips += c.status == Status::kSkip;
  }
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<testsuites><testsuite name=\"imgtool verify " << xml_escape(r.image) << "\" tests=\""
    << r.checks.size() << "\" failures=\"" << fails << "\" skipped=\"" << skips << "\">\n";
  for (const auto& c : r.checks) {
    o << "  <testcase classname=\"imgtool.verify\" name=\"" << xml_escape(c.id) << "\">";
    if (c.status == Status::kFail)
      o << "<failure message=\"" << xml_escape(detail(c)) << "\">" << xml_escape(c.title) << "</failure>";
    else if (c.status == Status::kSkip)
      o << "<skipped message=\"" << xml_escape(c.found) << "\"/>";
    else
      o << "<system-out>" << xml_escape(c.found) << "</system-out>";
    o << "</testcase>\n";
  }
  o << "</testsuite></testsuites>\n";
  return o.str();
}

}  // namespace imgtool::verify
