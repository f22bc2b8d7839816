// The helpers every fact family's reader shares (matrix/kb_read.h).
#include "matrix/kb_read.h"

#include <cctype>

#include "core/error.h"

namespace imgtool::matrix::kb_read {

// "11.0-11.8" or "12.6" -> VersionRange; checked against the doc position.
VersionRange range_of(const YamlDoc& d, const YAML::Node& n) {
  if (!n.IsScalar()) d.fail(n, "expected a version or a range like 11.0-11.8, found " + describe(n));
  const std::string& s = n.Scalar();
  VersionRange r;
  auto dash = s.find('-');
  r.from = s.substr(0, dash);
  r.to = dash == std::string::npos ? r.from : s.substr(dash + 1);
  if (!Version::parse(r.from) || !Version::parse(r.to))
    d.fail(n, "expected a version or a range like 11.0-11.8, found '" + s + "'");
  return r;
}

// source (required, non-empty), unconfirmed, note: common to every fact.
void read_fact(const YamlDoc& d, const YAML::Node& n, Fact& f) {
  f.source = d.str(n, "source");
  if (f.source.empty()) d.fail(n, "expected a non-empty 'source' for every fact, found ''");
  f.unconfirmed = d.boolean(n, "unconfirmed", false);
  f.note = d.str(n, "note", false);
}

// A fact nested under `key` (min_driver, reported_archs): a map of `value` beside source/unconfirmed/
// note, its Fact fields read into `f`; the node (null when `key` is absent) for the caller's value.
YAML::Node nested_fact(const YamlDoc& d, const YAML::Node& n, const std::string& key, const std::string& value, Fact& f,
                       const std::string& what, const std::string& kind) {
  YAML::Node m = n[key];
  if (!m) return m;
  d.expect_map(m, key + " (" + what + ")");
  d.check_keys(m, {value, "source", "unconfirmed", "note"}, kind);
  read_fact(d, m, f);
  return m;
}

// A mapping of scalar -> scalar ({"12": "libcublas.so.12"}); empty when the key is absent.
std::map<std::string, std::string> str_map(const YamlDoc& d, const YAML::Node& n, const std::string& key) {
  std::map<std::string, std::string> out;
  const YAML::Node& m = n[key];
  if (!m) return out;
  if (!m.IsMap()) d.fail(m, "expected '" + key + "' to map a major version to a value, found " + describe(m));
  for (const auto& kv : m) {
    if (!kv.second.IsScalar())
      d.fail(kv.second, "expected a value for '" + kv.first.Scalar() + "', found " + describe(kv.second));
    out[kv.first.Scalar()] = kv.second.Scalar();
  }
  return out;
}

// "sm_61,sm_70,compute_86": each item sm_<digits> or compute_<digits>.
bool arch_list(const std::string& s) {
  if (s.empty()) return false;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t digits = item.rfind("sm_", 0) == 0 ? 3 : item.rfind("compute_", 0) == 0 ? 8 : std::string::npos;
    if (digits == std::string::npos || item.size() == digits || item.size() > digits + 3 ||
        item.find_first_not_of("0123456789", digits) != std::string::npos)
      return false;
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

bool iso_date(const std::string& s) {
  auto digits = [&](size_t from, size_t n) { return s.find_first_not_of("0123456789", from) >= from + n; };
  return s.size() == 10 && digits(0, 4) && s[4] == '-' && digits(5, 2) && s[7] == '-' && digits(8, 2);
}

const YAML::Node& seq(const YamlDoc& d, const std::string& key) {
  static YAML::Node holder;
  d.check_keys(d.root(), {key}, "a knowledge-base file");
  holder = d.root()[key];
  if (!holder.IsSequence()) d.fail(holder, "expected '" + key + "' to be a list, found " + describe(holder));
  return holder;
}

// `word` occurs in `s` with no letter or digit right before or after it
// ("l4" is in "nvidia l4" but not in "nvidia l40s").
bool contains_word(const std::string& s, const std::string& word) {
  for (size_t p = s.find(word); p != std::string::npos; p = s.find(word, p + 1)) {
    bool left = p == 0 || !std::isalnum(static_cast<unsigned char>(s[p - 1]));
    size_t e = p + word.size();
    bool right = e == s.size() || !std::isalnum(static_cast<unsigned char>(s[e]));
    if (left && right) return true;
  }
  return false;
}

}  // namespace imgtool::matrix::kb_read
