#include "nightly/nightly_tag.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace imgtool::nightly {
namespace {

bool eight_digits(const std::string& s) {
  return s.size() == 8 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

std::string nightly_tag(const std::string& cell_tag, const std::string& yyyymmdd) {
  if (cell_tag.empty() || !eight_digits(yyyymmdd))
    throw InputError("nightly tag: expected a cell tag and a date YYYYMMDD, found '" + cell_tag + "', '" + yyyymmdd +
                     "'");
  return cell_tag + kNightlyInfix + yyyymmdd;
}

std::optional<NightlyTag> parse_nightly_tag(const std::string& tag) {
  auto at = tag.rfind(kNightlyInfix);
  if (at == std::string::npos || at == 0) return std::nullopt;
  std::string date = tag.substr(at + std::string(kNightlyInfix).size());
  if (!eight_digits(date)) return std::nullopt;
  return NightlyTag{tag.substr(0, at), date};
}

}  // namespace imgtool::nightly
