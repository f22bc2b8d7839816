#include "core/junit.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "core/strings.h"

namespace imgtool::junit {
namespace {

std::string time_attr(const std::optional<double>& s) {
  if (!s) return "";
  std::ostringstream o;
  o << " time=\"" << std::fixed << std::setprecision(3) << *s << "\"";
  return o.str();
}

size_t count(const Suite& s, Outcome o) {
  return static_cast<size_t>(std::count_if(s.cases.begin(), s.cases.end(), [o](auto& c) { return c.outcome == o; }));
}

}  // namespace

std::string render(const Suite& suite) {
  using strings::xml_escape;
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites><testsuite name=\"" << xml_escape(suite.name)
    << "\" tests=\"" << suite.cases.size() << "\" failures=\"" << count(suite, Outcome::kFailed) << "\" skipped=\""
    << count(suite, Outcome::kSkipped) << "\"" << time_attr(suite.seconds) << ">\n";
  for (const auto& c : suite.cases) {
    o << "  <testcase classname=\"" << xml_escape(c.classname) << "\" name=\"" << xml_escape(c.name) << "\""
      << time_attr(c.seconds) << ">";
    if (c.outcome == Outcome::kFailed)
      o << "<failure message=\"" << xml_escape(c.message) << "\">" << xml_escape(c.body) << "</failure>";
    else if (c.outcome == Outcome::kSkipped)
      o << "<skipped message=\"" << xml_escape(c.message) << "\"/>";
    else if (!c.body.empty())
      o << "<system-out>" << xml_escape(c.body) << "</system-out>";
    o << "</testcase>\n";
  }
  o << "</testsuite></testsuites>\n";
  return o.str();
}

}  // namespace imgtool::junit
