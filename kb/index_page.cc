#include "kb/index_page.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_file.h"
#include "core/strings.h"

namespace imgtool::kb {
namespace {

using json = nlohmann::json;

size_t digits_end(const std::string& s, size_t i) {
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

// At `i`: an optional separator (-, _, .), one of `labels` (longest first), an optional separator
// and number. Advances `i` past it and returns true; leaves `i` alone otherwise.
bool take_label(const std::string& s, size_t& i, std::initializer_list<std::string_view> labels) {
  size_t j = i < s.size() && (s[i] == '-' || s[i] == '_' || s[i] == '.') ? i + 1 : i;
  for (std::string_view l : labels) {
    if (s.compare(j, l.size(), l) != 0) continue;
    size_t k = j + l.size();
    size_t n = k < s.size() && (s[k] == '-' || s[k] == '_' || s[k] == '.') ? k + 1 : k;
    i = digits_end(s, n) > n ? digits_end(s, n) : k;
    return true;
  }
  return false;
}

// "1.0-1": PEP 440's implicit post release.
bool take_implicit_post(const std::string& s, size_t& i) {
  if (i >= s.size() || s[i] != '-' || digits_end(s, i + 1) == i + 1) return false;
  i = digits_end(s, i + 1);
  return true;
}

bool take_local(const std::string& s, size_t& i) {
  if (i >= s.size() || s[i] != '+' || i + 1 == s.size()) return false;
  for (size_t k = i + 1; k < s.size(); ++k)
    if (!std::isalnum(static_cast<unsigned char>(s[k])) && s[k] != '.') return false;
  i = s.size();
  return true;
}

// "N(.N)*" from `i`: its end, or npos when there is none.
size_t release_end(const std::string& s, size_t i) {
  while (true) {
    size_t d = digits_end(s, i);
    if (d == i) return std::string::npos;
    if (d + 1 < s.size() && s[d] == '.' && std::isdigit(static_cast<unsigned char>(s[d + 1])))
      i = d + 1;
    else
      return d;
  }
}

[[noreturn]] void bad_page(const std::string& url, const std::string& expected, const std::string& found) {
  throw InputError(url + ": expected " + expected + ", found " + found);
}

bool iso_day(const std::string& s) {
  auto digits = [&](size_t from, size_t n) { return digits_end(s, from) >= from + n; };
  return s.size() >= 10 && digits(0, 4) && s[4] == '-' && digits(5, 2) && s[7] == '-' && digits(8, 2);
}

// One release's files: the earliest upload day and whether every file is yanked.
IndexRelease pypi_release(const IndexVersion& v, const json& files, const std::string& url) {
  IndexRelease r{v, "", true};
  std::string at = "releases['" + v.text + "']";
  for (const json& f : files) {
    auto t = f.is_object() ? f.find("upload_time_iso_8601") : f.end();
    if (!f.is_object() || t == f.end() || !t->is_string() || !iso_day(t->get<std::string>()))
      bad_page(url, "every file of " + at + " to carry upload_time_iso_8601 (an ISO 8601 time)",
               f.is_object() ? (t == f.end() ? "none" : t->dump()) : "a JSON " + std::string(f.type_name()));
    auto y = f.find("yanked");
    if (y != f.end() && !y->is_boolean()) bad_page(url, at + " 'yanked' to be true or false", y->dump());
    std::string day = t->get<std::string>().substr(0, 10);
    if (r.date.empty() || day < r.date) r.date = day;
    r.yanked = r.yanked && y != f.end() && y->get<bool>();
  }
  return r;
}

void sort_by_version(std::vector<IndexRelease>& rs) {
  std::stable_sort(rs.begin(), rs.end(),
                   [](const IndexRelease& a, const IndexRelease& b) { return a.version.release < b.version.release; });
}

std::string keys_of(const json& j) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  return strings::join(keys, ", ");
}

json parse_json_page(std::string_view body, const std::string& url, const std::string& project) {
  if (auto at = json_too_deep_at(body))
    bad_page(
        url, "PyPI's JSON API answer for " + project,
        "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels (at byte " + std::to_string(*at) + ")");
  try {
    return json::parse(body);
  } catch (const json::exception& e) {  // parse_error, and out_of_range.406 "number overflow parsing '9E999…'"
    std::string what = e.what();
    what = what.substr(what.find(']') == std::string::npos ? 0 : what.find(']') + 2);
    bad_page(url, "PyPI's JSON API answer for " + project,
             "a body that is not JSON (" + std::to_string(body.size()) + " bytes; " + what + ")");
  }
}

// The text of every <a …>…</a>, in order; tags are matched case-insensitively.
std::vector<std::string> anchor_texts(std::string_view html, const std::string& url) {
  std::string low = strings::lower(html);
  std::vector<std::string> out;
  for (size_t p = low.find("<a"); p != std::string::npos; p = low.find("<a", p + 2)) {
    if (p + 2 < low.size() && !std::isspace(static_cast<unsigned char>(low[p + 2])) && low[p + 2] != '>') continue;
    size_t open_end = low.find('>', p), close = open_end == std::string::npos ? open_end : low.find("</a", open_end);
    if (close == std::string::npos)
      bad_page(url, "every <a> anchor closed by </a>", "one opened at byte " + std::to_string(p) + " and never closed");
    out.push_back(strings::trim(html.substr(open_end + 1, close - open_end - 1)));
    p = close;
  }
  return out;
}

struct DistFile {
  std::string name, version;
};

// "paddlepaddle_gpu-2.6.2.post112-cp310-cp310-linux_x86_64.whl" -> {paddlepaddle_gpu, 2.6.2.post112};
// "paddlepaddle-gpu-2.6.2.tar.gz" -> {paddlepaddle-gpu, 2.6.2}.
std::optional<DistFile> dist_file(const std::string& file) {
  auto ends = [&](std::string_view ext) { return file.size() > ext.size() && file.ends_with(ext); };
  if (ends(".whl")) {
    auto parts = strings::split(file.substr(0, file.size() - 4), '-');
    if (parts.size() < 5 || parts.size() > 6) return std::nullopt;
    return DistFile{parts[0], parts[1]};
  }
  for (std::string_view ext : {".tar.gz", ".zip", ".tar.bz2", ".tgz"}) {
    if (!ends(ext)) continue;
    std::string stem = file.substr(0, file.size() - ext.size());
    size_t dash = stem.rfind('-');
    if (dash == std::string::npos || dash == 0) return std::nullopt;
    return DistFile{stem.substr(0, dash), stem.substr(dash + 1)};
  }
  return std::nullopt;
}

bool looks_like_html(const std::string& low) {
  return low.find("<html") != std::string::npos || low.find("<!doctype html") != std::string::npos ||
         low.find("<a ") != std::string::npos;
}

}  // namespace

std::optional<IndexVersion> IndexVersion::parse(std::string_view text) {
  std::string s = strings::lower(strings::trim(text));
  size_t i = !s.empty() && s[0] == 'v' ? 1 : 0;
  if (size_t e = digits_end(s, i); e > i && e < s.size() && s[e] == '!') {
    if (s.find_first_not_of('0', i) != e) return std::nullopt;  // a non-zero epoch: not compared here
    i = e + 1;
  }
  size_t end = release_end(s, i);
  if (end == std::string::npos) return std::nullopt;
  auto release = Version::parse(std::string_view(s).substr(i, end - i));
  if (!release) return std::nullopt;
  i = end;
  bool pre = take_label(s, i, {"alpha", "beta", "preview", "pre", "rc", "a", "b", "c"});
  if (!take_implicit_post(s, i)) take_label(s, i, {"post", "rev", "r"});
  bool dev = take_label(s, i, {"dev"});
  take_local(s, i);
  if (i != s.size()) return std::nullopt;
  return IndexVersion{std::string(text), *release, !pre && !dev};
}

std::vector<IndexRelease> read_pypi_json(std::string_view body, const std::string& url, const std::string& project) {
  json j = parse_json_page(body, url, project);
  const std::string shape = "PyPI's JSON API answer (an object with 'info' and 'releases' objects)";
  if (!j.is_object() || !j.contains("info") || !j["info"].is_object() || !j.contains("releases") ||
      !j["releases"].is_object())
    bad_page(
        url, shape,
        j.is_object() ? "an object with keys " + strings::quoted(keys_of(j)) : "a JSON " + std::string(j.type_name()));
  const json& name = j["info"].contains("name") ? j["info"]["name"] : json();
  if (!name.is_string() || strings::pep503_name(name.get<std::string>()) != strings::pep503_name(project))
    bad_page(url, "the page of " + project + " (info.name)",
             name.is_string() ? "the page of '" + name.get<std::string>() + "'" : "no name");
  std::vector<IndexRelease> out;
  for (const auto& [text, files] : j["releases"].items()) {
    if (!files.is_array())
      bad_page(url, "releases['" + text + "'] to be a list of files", "a JSON " + std::string(files.type_name()));
    auto v = IndexVersion::parse(text);
    if (v && !files.empty()) out.push_back(pypi_release(*v, files, url));
  }
  sort_by_version(out);
  return out;
}

std::vector<IndexRelease> read_simple_page(std::string_view body, const std::string& url, const std::string& project) {
  if (!looks_like_html(strings::lower(body)))
    bad_page(url, "a PEP 503 project page (HTML whose anchors name " + project + "'s files)", strings::quoted(body));
  std::vector<IndexRelease> out;
  for (const std::string& text : anchor_texts(body, url)) {
    auto f = dist_file(text);
    if (!f)
      bad_page(url, "anchors whose text is a file name of " + project + " (….whl, ….tar.gz)",
               "anchor text " + strings::quoted(text));
    if (strings::pep503_name(f->name) != strings::pep503_name(project)) continue;
    auto v = IndexVersion::parse(f->version);
    if (!v) bad_page(url, "a PEP 440 version in the file name " + strings::quoted(text), strings::quoted(f->version));
    bool seen = std::any_of(out.begin(), out.end(), [&](const IndexRelease& r) { return r.version.text == v->text; });
    if (!seen) out.push_back({*v, "", false});
  }
  sort_by_version(out);
  return out;
}

}  // namespace imgtool::kb
