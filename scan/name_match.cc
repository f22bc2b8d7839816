#include "scan/name_match.h"

#include <cctype>

namespace imgtool::scan::names {

namespace {

bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

bool digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!digit(c)) return false;
  return true;
}

// \d+(?:\.\d+)*
bool dotted_digits(std::string_view s) {
  while (true) {
    size_t dot = s.find('.');
    if (!digits(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::string_view basename(std::string_view p) { return p.substr(p.rfind('/') + 1); }

// Strips `dir` (one component) off the end of `p`; false if p does not end in "/dir".
bool pop(std::string_view& p, std::string_view dir) {
  if (!ends_with(p, dir) || p.size() == dir.size() || p[p.size() - dir.size() - 1] != '/') return false;
  p.remove_suffix(dir.size() + 1);
  return true;
}

size_t skip_space(std::string_view s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

}  // namespace

std::optional<std::string> python_dir(std::string_view c) {
  if (!starts_with(c, "python3.") || !digits(c.substr(8))) return std::nullopt;
  return std::string(c.substr(6));
}

std::optional<std::string> stdlib_python(std::string_view path) {
  if (!pop(path, "os.py")) return std::nullopt;
  auto v = python_dir(basename(path));
  if (!v || !pop(path, basename(path)) || !ends_with(path, "/lib")) return std::nullopt;
  return v;
}

std::optional<SitePackages> site_packages(std::string_view path) {
  // Walk the folders from the deepest up: the first hit is the regex's greedy (last) match.
  std::string_view dir = path.substr(0, path.rfind('/'));
  for (; !dir.empty(); dir = dir.substr(0, dir.rfind('/'))) {
    std::string_view base = basename(dir), rest = dir;
    if (base != "site-packages" && base != "dist-packages") continue;
    pop(rest, base);
    auto v = python_dir(basename(rest));
    if (v && pop(rest, basename(rest)) && ends_with(rest, "/lib")) return SitePackages{std::string(dir), *v};
  }
  return std::nullopt;
}

std::optional<Dist> paddle_dist(std::string_view path) {
  std::string_view base = basename(path);
  if (base.size() == path.size() || !ends_with(base, ".dist-info")) return std::nullopt;
  std::string_view stem = base.substr(0, base.size() - 10);
  size_t dash = stem.rfind('-');
  if (dash == std::string_view::npos || dash + 1 == stem.size()) return std::nullopt;
  std::string_view name = stem.substr(0, dash), version = stem.substr(dash + 1);
  if (!starts_with(name, "paddlepaddle")) return std::nullopt;
  std::string_view suffix = name.substr(12);
  if (!suffix.empty()) {
    if (suffix.size() < 2 || (suffix[0] != '_' && suffix[0] != '-')) return std::nullopt;
    for (char c : suffix.substr(1))
      if (!(digit(c) || (c >= 'a' && c <= 'z'))) return std::nullopt;
  }
  return Dist{std::string(path.substr(0, path.size() - base.size() - 1)), std::string(name), std::string(version)};
}

std::optional<std::string> versioned(std::string_view base, std::string_view prefix) {
  if (!starts_with(base, prefix) || !dotted_digits(base.substr(prefix.size()))) return std::nullopt;
  return std::string(base.substr(prefix.size()));
}

std::optional<std::string> lib_dist(std::string_view base, std::string_view name, bool allow_libs) {
  if (!ends_with(base, ".dist-info")) return std::nullopt;
  std::string_view stem = base.substr(0, base.size() - 10);
  size_t dash = stem.rfind('-');
  if (dash == std::string_view::npos || !dotted_digits(stem.substr(dash + 1))) return std::nullopt;
  std::string_view n = stem.substr(0, dash);
  if (allow_libs && ends_with(n, "_libs")) n.remove_suffix(5);
  if (!starts_with(n, name)) return std::nullopt;
  std::string_view cu = n.substr(name.size());
  if (!cu.empty() && !(starts_with(cu, "_cu") && digits(cu.substr(3)))) return std::nullopt;
  return std::string(stem.substr(dash + 1));
}

std::optional<std::string> venv_version(std::string_view text) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    size_t i = skip_space(line, 0);
    if (line.substr(i, 7) != "version") continue;
    i += 7;
    if (line.substr(i, 5) == "_info") i += 5;
    i = skip_space(line, i);
    if (i >= line.size() || line[i] != '=') continue;
    i = skip_space(line, i + 1);
    size_t j = i;
    while (j < line.size() && digit(line[j])) ++j;
    if (j == i || j >= line.size() || line[j] != '.') continue;
    size_t k = j + 1;
    while (k < line.size() && digit(line[k])) ++k;
    if (k > j + 1) return std::string(line.substr(i, k - i));
  }
  return std::nullopt;
}

std::string py_string_var(std::string_view text, std::string_view name) {
  for (size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1)) {
    size_t i = skip_space(text, at + name.size());
    if (i >= text.size() || text[i] != '=') continue;
    i = skip_space(text, i + 1);
    if (i >= text.size() || text[i] != '\'') continue;
    size_t end = text.find('\'', i + 1);
    if (end == std::string_view::npos) continue;
    return std::string(text.substr(i + 1, end - i - 1));
  }
  return "";
}

}  // namespace imgtool::scan::names
