#include "dockerfiles/cell_values.h"

#include <ctime>
#include <sstream>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/hash.h"
#include "core/refname.h"
#include "core/strings.h"
#include "core/version.h"
#include "matrix/labels.h"

namespace imgtool::dockerfiles {
namespace {

using matrix::Cell;

const char* kHashLabelKey = labels::kInputsHash;
// The hash goes on the last line of the LABEL instruction the labels table renders (one step).
const char* kHashLinePrefix = "      ";

// The pinned-requirement matcher written out (std::regex recursed once per character: a long
// matrix value crashed generate). run_of: the end of the run of [A-Za-z0-9] and `extra` from `at`.
bool in_class(char c, std::string_view extra) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         extra.find(c) != std::string_view::npos;
}
size_t run_of(std::string_view s, size_t at, std::string_view extra) {
  while (at < s.size() && in_class(s[at], extra)) ++at;
  return at;
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// name[extras]==version: [A-Za-z0-9][A-Za-z0-9._-]* (\[[A-Za-z0-9,._-]+\])? == [0-9][A-Za-z0-9.+!-]*
bool is_pinned_requirement(std::string_view r) {
  if (r.empty() || !in_class(r[0], "")) return false;
  size_t at = run_of(r, 1, "._-");
  if (at < r.size() && r[at] == '[') {
    size_t end = run_of(r, at + 1, ",._-");
    if (end == at + 1 || end >= r.size() || r[end] != ']') return false;
    at = end + 1;
  }
  if (r.compare(at, 2, "==") != 0) return false;
  at += 2;
  return at < r.size() && is_digit(r[at]) && run_of(r, at + 1, ".+!-") == r.size();
}

void check_safe(const Cell& cell, const std::string& field, const std::string& value) {
  static const std::string bad = "\"'$\\`;&|<>";
  for (unsigned char c : value)
    if (c < 0x20 || c == 0x7f || bad.find(static_cast<char>(c)) != std::string::npos)
      throw InputError("cell " + cell.tag + ": " + field + " " + strings::quoted(value) +
                       " has a character that is unsafe in a Dockerfile (quotes, $, \\, `, ;, &, |, <, >, "
                       "control characters)");
}

void check_tag(const Cell& c) {
  if (!refname::is_tag(c.tag))
    throw InputError("cell tag " + strings::quoted(c.tag) +
                     ": expected a Docker tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})");
}

void check_variant(const Cell& c) {
  if (c.variant != "gpu" && c.variant != "cpu")
    throw InputError("cell " + c.tag + ": variant " + strings::quoted(c.variant) + ": expected gpu or cpu");
  if (c.variant == "gpu") Version::parse_or_throw(c.cuda, "cell " + c.tag + ": cuda");
  Version::parse_or_throw(c.python, "cell " + c.tag + ": python");
  if (c.base_image.empty()) throw InputError("cell " + c.tag + ": base_image is empty");
  if (!c.base_digest.empty() && !is_sha256_digest(c.base_digest))
    throw InputError("cell " + c.tag + ": base_digest " + strings::quoted(c.base_digest) +
                     ": expected sha256:<64 hex>");
  if (!c.base_id.empty() && !is_sha256_digest(c.base_id))
    throw InputError("cell " + c.tag + ": base_id " + strings::quoted(c.base_id) + ": expected sha256:<64 hex>");
  if (!c.base_from.empty() && c.base_from != c.base_id &&
      !(c.base_from.rfind(c.base_image + "@", 0) == 0 && is_sha256_digest(c.base_from.substr(c.base_image.size() + 1))))
    throw InputError("cell " + c.tag + ": base_from " + strings::quoted(c.base_from) +
                     ": expected the base's image ID or " + c.base_image + "@sha256:<64 hex>");
}

// "scheme://user[:pass]@host/..." : user-info before the host.
bool has_userinfo(const std::string& url) {
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  size_t end = url.find_first_of("/?#", start);
  return url.substr(start, end == std::string::npos ? std::string::npos : end - start).find('@') != std::string::npos;
}

std::vector<std::pair<std::string, std::string>> index_urls(const Cell& c) {
  std::vector<std::pair<std::string, std::string>> urls{{"pip_index_url", c.pip_index_url}};
  if (auto t = c.overrides.find("trt_pip_index_url"); t != c.overrides.end())
    urls.push_back({"trt_pip_index_url", t->second});
  return urls;
}

// Good practice: every image pins the exact Paddle release it claims.
void check_pip(const Cell& c) {
  if (!is_pinned_requirement(c.pip_requirement))
    throw InputError("cell " + c.tag + ": pip_requirement " + strings::quoted(c.pip_requirement) +
                     " is not pinned; expected name==version (e.g. paddlepaddle-gpu==3.1.0)");
  for (const auto& [field, url] : index_urls(c))
    if (has_userinfo(url))  // the URL itself is not echoed: it holds a password
      throw InputError("cell " + c.tag + ": " + field +
                       ": expected an index URL without user:password@, found "
                       "credentials in it (a build argument stays in the image history); serve them with a BuildKit "
                       "secret (RUN --mount=type=secret,id=netrc,target=/root/.netrc) or a netrc file instead");
  if (c.wheelhouse.empty() && !c.pip_index_url.empty() && c.pip_index_url.rfind("https://", 0) != 0)
    throw InputError("cell " + c.tag + ": pip_index_url " + strings::quoted(c.pip_index_url) +
                     ": expected an https:// URL (packages must be fetched over verified TLS)");
}

Values field_values(const Cell& c) {
  return {{"repository", c.repository},
          {"tag", c.tag},
          {"variant", c.variant},
          {"flavor", c.flavor},
          {"paddle", c.paddle},
          {"python", c.python},
          {"os", c.os},
          {"cuda", c.cuda},
          {"cudnn", c.cudnn},
          {"trt", c.trt},
          {"min_driver", matrix::effective_min_driver(c)},
          {"min_driver_full", c.min_driver_full},
          {"cuda_archs", c.cuda_archs},
          {"cudnn_package", c.cudnn_package},
          {"dynload_links", strings::join(c.dynload_links, " ")},
          {"base_image", c.base_image},
          {"base_digest", c.base_digest},
          {"base_id", c.base_id},
          {"pip_requirement", c.pip_requirement},
          {"pip_index_url", c.wheelhouse.empty() && c.pip_index_url.empty() ? kDefaultIndexUrl : c.pip_index_url},
          {"template_name", c.template_name}};
}

// What FROM names: the matrix's digest pin, else the builder's (base_from: a registry digest, or the
// image ID of a base made here, which the classic builder takes as `FROM sha256:<id>`), else the tag.
std::string base_ref(const Cell& c) {
  if (!c.base_digest.empty()) return c.base_image + "@" + c.base_digest;
  return c.base_from.empty() ? c.base_image : c.base_from;
}

Values derived_values(const Cell& c, const std::string& kb_version) {
  bool gpu = c.variant == "gpu";
  return {{"base_ref", base_ref(c)},
          {"base_ref_digest", base_ref_digest(c)},
          {"gpu", gpu ? "1" : ""},
          {"cpu", gpu ? "" : "1"},
          {"cuda_mm", gpu ? Version::parse_or_throw(c.cuda, "cuda").truncated(2) : ""},
          {"cudnn_package_name", c.cudnn_package.substr(0, c.cudnn_package.find('='))},
          {"nvidia_require_cuda", gpu ? nvidia_require_cuda(c) : ""},
          {"wheelhouse", c.wheelhouse.empty() ? "" : "wheels"},
          // The dynload links: before the venv is copied in (2.x: the base's libraries), or after it
          // (a pip build: the nvidia-* packages in the venv).
          {"dynload_before_venv", !c.dynload_links.empty() && !c.pip_cuda_libraries ? "1" : ""},
          {"dynload_after_venv", !c.dynload_links.empty() && c.pip_cuda_libraries ? "1" : ""},
          {"kb_version", kb_version},
          {"labels", ""},
          {"inputs_hash_label", ""}};
}

std::string label_escape(const std::string& v) {
  std::string out;
  for (char ch : v) {
    if (ch == '"' || ch == '\\' || ch == '$') out += '\\';
    out += ch;
  }
  return out;
}

}  // namespace

std::string nvidia_require_cuda(const Cell& cell) {
  std::string s = "cuda>=" + Version::parse_or_throw(cell.cuda, "cell " + cell.tag + ": cuda").truncated(2);
  if (std::string floor = matrix::effective_min_driver(cell); !floor.empty()) s += " driver>=" + floor;
  return s;
}

// "2026-11-03" -> the seconds of that day's 00:00 UTC, as text; "" for "".
static std::string epoch_of_day(const std::string& day) {
  if (day.empty()) return "";
  std::tm tm{};
  if (day.size() != 10 || !strptime(day.c_str(), "%Y-%m-%d", &tm))
    throw InputError("kb.yaml released: expected YYYY-MM-DD, found '" + day + "'");
  return std::to_string(static_cast<long long>(timegm(&tm)));
}

Values cell_values(const Cell& cell, const std::string& kb_version, const std::string& kb_released) {
  check_tag(cell);
  check_variant(cell);
  check_pip(cell);
  // pip_pin: installed before the first `pip install` (same pin as scripts/wheelhouse.sh's PIP_PIN).
  Values v = {{"user", "paddle"},
              {"uid", "1000"},
              {"runtime_packages", "libgomp1"},
              {"pip_pin", "pip==24.3.1"},
              {"pip_pin_index_url", kDefaultIndexUrl},
              {"trt_pip_requirement", ""},
              {"trt_pip_index_url", kDefaultIndexUrl}};
  for (auto& [k, val] : cell.overrides) v[k] = val;
  for (auto& [k, val] : field_values(cell)) v[k] = val;
  for (auto& [k, val] : v) check_safe(cell, k, val);  // inputs; derived values are ours
  check_safe(cell, "kb_version", kb_version);
  for (auto& [k, val] : derived_values(cell, kb_version)) v[k] = val;
  v["source_date_epoch"] = epoch_of_day(kb_released);
  return v;
}

std::string render_labels(const SourceFile& table, const Values& values, std::map<std::string, std::string>* set) {
  std::istringstream in(table.bytes);
  std::string line, out;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    auto tab = line.find('\t');
    std::string where = table.label + ":" + std::to_string(n);
    if (tab == std::string::npos) throw InputError(where + ": expected KEY<TAB>VALUE");
    std::string value = render_text(line.substr(tab + 1), values, where);
    while (!value.empty() && value.back() == '\n') value.pop_back();
    if (value.empty()) continue;
    if (set) (*set)[line.substr(0, tab)] = value;
    out += (out.empty() ? "LABEL " : " \\\n      ") + line.substr(0, tab) + "=\"" + label_escape(value) + "\"";
  }
  return out.empty() ? "" : out + "\n";
}

std::string inputs_hash_label(const std::string& inputs_hash, const std::string& stage_key) {
  return std::string(kHashLinePrefix) + kHashLabelKey + "=\"" + inputs_hash + "\" " + labels::kStageKey + "=\"" +
         stage_key + "\"";
}

std::string labels_before_hash(const std::string& labels) {
  if (labels.empty()) return "LABEL \\\n";
  std::string out = labels;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out + " \\\n";
}

// Drops the hash line and the continuation that led to it: the text the hash was taken over.
std::string strip_inputs_hash_label(const std::string& dockerfile) {
  std::string prefix = std::string(kHashLinePrefix) + kHashLabelKey + "=";
  std::istringstream in(dockerfile);
  std::vector<std::string> kept;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) {
      kept.push_back(line);
      continue;
    }
    std::string& before = kept.empty() ? line : kept.back();
    if (before == "LABEL \\")
      kept.pop_back();
    else if (before.size() >= 2 && before.compare(before.size() - 2, 2, " \\") == 0)
      before.resize(before.size() - 2);
  }
  std::string out;
  for (const auto& l : kept) out += l + "\n";
  return out;
}

std::string base_ref_digest(const matrix::Cell& c) {
  std::string ref = base_ref(c);  // what FROM names: the digest is whatever follows its '@'
  auto at = ref.find('@');
  return at == std::string::npos ? "" : ref.substr(at + 1);
}

}  // namespace imgtool::dockerfiles
