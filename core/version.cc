#include "core/version.h"

#include "core/error.h"

namespace imgtool {

std::optional<Version> Version::parse(std::string_view s) {
  Version v;
  v.text = std::string(s);
  if (s.empty()) return std::nullopt;
  int cur = -1;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
      if (cur > 100000000) return std::nullopt;
    } else if (c == '.') {
      if (cur < 0) return std::nullopt;
      v.parts.push_back(cur);
      cur = -1;
    } else {
      return std::nullopt;
    }
  }
  if (cur < 0) return std::nullopt;
  v.parts.push_back(cur);
  return v;
}

Version Version::parse_or_throw(std::string_view s, const std::string& where) {
  auto v = parse(s);
  if (!v) throw InputError(where + ": expected a version like 12.6, found '" + std::string(s) + "'");
  return *v;
}

int Version::compare(const Version& o) const {
  size_t n = std::max(parts.size(), o.parts.size());
  for (size_t i = 0; i < n; ++i) {
    int a = i < parts.size() ? parts[i] : 0;
    int b = i < o.parts.size() ? o.parts[i] : 0;
    if (a != b) return a < b ? -1 : 1;
  }
  return 0;
}

bool Version::is_prefix_of(const Version& o) const {
  if (parts.size() > o.parts.size()) return false;
  for (size_t i = 0; i < parts.size(); ++i)
    if (parts[i] != o.parts[i]) return false;
  return true;
}

std::string Version::truncated(size_t n) const {
  std::string out;
  for (size_t i = 0; i < parts.size() && i < n; ++i) {
    if (i) out += '.';
    out += std::to_string(parts[i]);
  }
  return out;
}

}  // namespace imgtool
