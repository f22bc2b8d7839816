#include "core/refname.h"

#include "core/hash.h"
#include "core/strings.h"

namespace imgtool::refname {
namespace {

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return lower_alnum(c) || (c >= 'A' && c <= 'Z'); }
bool digit(char c) { return c >= '0' && c <= '9'; }

bool is_port(std::string_view s) {
  if (s.empty() || s.size() > 5) return false;
  for (char c : s)
    if (!digit(c)) return false;
  return true;
}

// [A-Za-z0-9] | [A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9]
bool is_host_component(std::string_view s) {
  if (s.empty() || !alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!alnum(c) && c != '-') return false;
  return true;
}

bool is_host(std::string_view s) {
  if (s.size() > 2 && s.front() == '[' && s.back() == ']') {
    for (char c : s.substr(1, s.size() - 2))
      if (!(digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':')) return false;
    return true;
  }
  size_t start = 0;
  for (;;) {
    size_t dot = s.find('.', start);
    if (!is_host_component(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start)))
      return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

bool looks_like_domain(std::string_view first) {
  if (first == "localhost") return true;
  for (char c : first)
    if (c == '.' || c == ':' || (c >= 'A' && c <= 'Z')) return true;
  return false;
}

bool is_path_component(std::string_view s) {
  if (s.empty() || !lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
  for (size_t i = 0; i < s.size();) {
    if (lower_alnum(s[i])) {
      ++i;
      continue;
    }
    // A separator: ".", "_", "__" or "-"+, between alphanumerics.
    size_t j = i;
    if (s[i] == '-') {
      while (j < s.size() && s[j] == '-') ++j;
    } else if (s[i] == '.') {
      j = i + 1;
    } else if (s[i] == '_') {
      j = (i + 1 < s.size() && s[i + 1] == '_') ? i + 2 : i + 1;
    } else {
      return false;
    }
    if (j >= s.size() || !lower_alnum(s[j])) return false;
    i = j;
  }
  return true;
}

bool is_path(std::string_view s) {
  size_t start = 0;
  for (;;) {
    size_t slash = s.find('/', start);
    if (!is_path_component(s.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start)))
      return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

bool is_tag(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  auto word = [](char c) { return alnum(c) || c == '_'; };
  if (!word(s.front())) return false;
  for (char c : s)
    if (!word(c) && c != '.' && c != '-') return false;
  return true;
}

bool is_domain(std::string_view s) {
  size_t colon = s.rfind(':');
  if (colon != std::string_view::npos && (s.front() != '[' || colon > s.rfind(']')))
    return is_port(s.substr(colon + 1)) && is_host(s.substr(0, colon));
  return is_host(s);
}

std::optional<std::string> check_name(std::string_view s, bool with_tag) {
  std::string_view name = s;
  if (with_tag) {
    if (auto at = name.find('@'); at != std::string_view::npos) {
      if (!is_sha256_digest(name.substr(at + 1)))
        return "expected @sha256:<64 hex digits> after the name, found " + strings::quoted(name.substr(at));
      name = name.substr(0, at);
    }
    size_t slash = name.rfind('/'), colon = name.rfind(':');
    if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
      if (!is_tag(name.substr(colon + 1)))
        return "expected a tag of [A-Za-z0-9_.-] (at most 128, not starting with '.' or '-'), found " +
               strings::quoted(name.substr(colon + 1));
      name = name.substr(0, colon);
    }
  }
  if (name.empty()) return "expected an image name, found nothing";
  if (name.size() > 255)
    return "expected an image name of at most 255 characters, found " + std::to_string(name.size());
  std::string_view path = name;
  if (size_t slash = name.find('/'); slash != std::string_view::npos && looks_like_domain(name.substr(0, slash))) {
    if (!is_domain(name.substr(0, slash)))
      return "expected a registry host[:port] before the first '/', found " + strings::quoted(name.substr(0, slash));
    path = name.substr(slash + 1);
  }
  if (!is_path(path))
    return "expected a repository of lower-case letters, digits and separators (. _ __ -) like ai/paddle, found " +
           strings::quoted(path);
  return std::nullopt;
}

}  // namespace imgtool::refname
