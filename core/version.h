// Dotted version numbers ("12.6", "8.9.1", "470.82.01") as used by CUDA,
// cuDNN, drivers, Python and Paddle. Comparison is numeric, component-wise;
// missing components count as 0 ("12.6" == "12.6.0").
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace imgtool {

struct Version {
  std::vector<int> parts;
  std::string text;  // as written

  // Parses "N(.N)*"; nullopt for anything else (letters, empty parts, signs).
  static std::optional<Version> parse(std::string_view s);
  // Parses or throws InputError("<where>: expected a version like 12.6, found '<s>'").
  static Version parse_or_throw(std::string_view s, const std::string& where);

  int compare(const Version& o) const;
  bool operator==(const Version& o) const { return compare(o) == 0; }
  bool operator<(const Version& o) const { return compare(o) < 0; }
  bool operator<=(const Version& o) const { return compare(o) <= 0; }
  bool operator>(const Version& o) const { return compare(o) > 0; }
  bool operator>=(const Version& o) const { return compare(o) >= 0; }
  // "12.6" matches "12.6.3": every component of *this equals o's.
  bool is_prefix_of(const Version& o) const;
  // First n components joined ("12.6.3".major_minor() == "12.6").
  std::string truncated(size_t n) const;
  int major() const { return parts.empty() ? 0 : parts[0]; }
  int minor() const { return parts.size() < 2 ? 0 : parts[1]; }
};

}  // namespace imgtool
