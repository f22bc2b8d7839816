#include "matrix/yaml_doc.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/json_file.h"
#include "core/version.h"

namespace imgtool::matrix {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void check_json_syntax(const std::string& text, const std::string& name) {
  (void)parse_json_text(text, name, "valid JSON");
}

// The first byte that is not part of well-formed UTF-8 (RFC 3629: no overlongs, no
// surrogates, nothing past U+10FFFF), or npos.
size_t first_bad_utf8(const std::string& t) {
  auto cont = [&](size_t i) { return i < t.size() && (static_cast<unsigned char>(t[i]) & 0xC0) == 0x80; };
  for (size_t i = 0; i < t.size();) {
    unsigned char c = t[i];
    size_t n = c < 0x80                   ? 1
               : (c >= 0xC2 && c <= 0xDF) ? 2
               : (c >= 0xE0 && c <= 0xEF) ? 3
               : (c >= 0xF0 && c <= 0xF4) ? 4
                                          : 0;
    if (n == 0) return i;
    for (size_t k = 1; k < n; ++k)
      if (!cont(i + k)) return i;
    unsigned char c1 = n > 1 ? t[i + 1] : 0;
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F))
      return i;
    i += n;
  }
  return std::string::npos;
}

void check_utf8(const std::string& text, const std::string& name) {
  size_t bad = first_bad_utf8(text);
  if (bad == std::string::npos) return;
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[bad]));
  throw InputError(name + ":" + line_col_at(text, bad) + ": expected UTF-8 text, found the byte " + hex);
}

}  // namespace

std::string describe(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "'" + n.Scalar() + "'";
}

YamlDoc YamlDoc::parse(const std::string& text, const std::string& name) {
  YamlDoc d;
  d.file_ = name;
  check_utf8(text, name);
  if (ends_with(name, ".json")) check_json_syntax(text, name);
  try {
    d.root_ = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(name + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                     ": expected valid YAML, found " + e.msg);
  }
  d.check_unique_keys(d.root_);
  return d;
}

YamlDoc YamlDoc::load(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    throw InputError(path + ": expected a readable file, found " + e.what());
  }
  return parse(text, path);
}

// yaml-cpp keeps both entries of a repeated key (lookups see the first) and nlohmann keeps
// the last: either way one of the two values would be silently dropped.
// Aliases share nodes, so a small file can stand for an exponentially large tree
// ("billion laughs"): the walk is bounded by kMaxNodes visits.
void YamlDoc::check_unique_keys(const YAML::Node& n, size_t* visits) const {
  size_t count = 0;
  if (!visits) visits = &count;
  constexpr size_t kMaxNodes = 100000;
  if (++*visits > kMaxNodes)
    fail(n, "expected at most " + std::to_string(kMaxNodes) + " values (aliases included), found more");
  if (n.IsSequence())
    for (const auto& e : n) check_unique_keys(e, visits);
  if (!n.IsMap()) return;
  std::map<std::string, std::string> seen;  // key -> where
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (it->first.IsScalar()) {
      auto [prev, fresh] = seen.emplace(it->first.Scalar(), where(it->first));
      if (!fresh)
        fail(it->first, "expected each key once in a mapping, found '" + it->first.Scalar() + "' again (first at " +
                            prev->second + ")");
    }
    check_unique_keys(it->second, visits);
  }
}

std::string YamlDoc::where(const YAML::Node& n) const {
  if (!n.IsDefined()) return file_;
  auto m = n.Mark();
  if (m.is_null()) return file_;
  return file_ + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

void YamlDoc::fail(const YAML::Node& n, const std::string& msg) const { throw InputError(where(n) + ": " + msg); }

void YamlDoc::expect_map(const YAML::Node& n, const std::string& what) const {
  if (!n.IsMap()) fail(n, "expected " + what + " (a mapping), found " + describe(n));
}

void YamlDoc::check_keys(const YAML::Node& map, const std::set<std::string>& allowed, const std::string& what) const {
  expect_map(map, what);
  for (auto it = map.begin(); it != map.end(); ++it) {
    std::string key = it->first.Scalar();
    if (allowed.count(key)) continue;
    std::string list;
    for (auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(it->first, "expected a key of " + what + " (" + list + "), found unknown key '" + key + "'");
  }
}

std::string YamlDoc::str(const YAML::Node& map, const std::string& key, bool required) const {
  YAML::Node v = map[key];
  if (!v.IsDefined() || v.IsNull()) {
    if (required) fail(map, "expected key '" + key + "', found none");
    return "";
  }
  if (!v.IsScalar()) fail(v, "expected '" + key + "' to be a string, found " + describe(v));
  return v.Scalar();
}

std::string YamlDoc::version_of(const YAML::Node& v) const {
  if (!v.IsScalar()) fail(v, "expected a version like 12.6, found " + describe(v));
  if (!Version::parse(v.Scalar())) fail(v, "expected a version like 12.6, found '" + v.Scalar() + "'");
  return v.Scalar();
}

std::string YamlDoc::version(const YAML::Node& map, const std::string& key, bool required) const {
  YAML::Node v = map[key];
  if (!v.IsDefined() || v.IsNull()) {
    if (required) fail(map, "expected key '" + key + "' (a version), found none");
    return "";
  }
  return version_of(v);
}

bool YamlDoc::boolean(const YAML::Node& map, const std::string& key, bool dflt) const {
  YAML::Node v = map[key];
  if (!v.IsDefined() || v.IsNull()) return dflt;
  bool out = dflt;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, out))
    fail(v, "expected '" + key + "' to be true or false, found " + describe(v));
  return out;
}

std::vector<std::string> YamlDoc::str_list(const YAML::Node& map, const std::string& key, bool required) const {
  YAML::Node v = map[key];
  std::vector<std::string> out;
  if (!v.IsDefined() || v.IsNull()) {
    if (required) fail(map, "expected key '" + key + "' (a list), found none");
    return out;
  }
  if (v.IsScalar()) return {v.Scalar()};
  if (!v.IsSequence()) fail(v, "expected '" + key + "' to be a list, found " + describe(v));
  for (const auto& e : v) {
    if (!e.IsScalar()) fail(e, "expected a string in '" + key + "', found " + describe(e));
    out.push_back(e.Scalar());
  }
  return out;
}

double YamlDoc::number_or_null(const YAML::Node& map, const std::string& key) const {
  YAML::Node v = map[key];
  if (!v.IsDefined()) fail(map, "expected key '" + key + "' (a number or null), found none");
  if (v.IsNull()) return 0;
  double d = 0;
  if (!v.IsScalar() || !YAML::convert<double>::decode(v, d))
    fail(v, "expected '" + key + "' to be a number or null, found " + describe(v));
  return d;
}

bool expand_env(const std::string& in, std::string& out, std::string& missing) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '$' || i + 1 >= in.size() || in[i + 1] != '{') {
      out += in[i];
      continue;
    }
    size_t end = in.find('}', i + 2);
    if (end == std::string::npos) {
      out += in.substr(i);
      break;
    }
    std::string name = in.substr(i + 2, end - i - 2), dflt;
    bool has_default = false;
    if (auto d = name.find(":-"); d != std::string::npos) {
      dflt = name.substr(d + 2);
      name = name.substr(0, d);
      has_default = true;
    }
    const char* v = std::getenv(name.c_str());
    if ((!v || !*v) && !has_default) {
      missing = name;
      return false;
    }
    out += (v && *v) ? std::string(v) : dflt;
    i = end;
  }
  return true;
}

}  // namespace imgtool::matrix
