#include "dockerfiles/lint.h"

#include <regex>
#include <sstream>

namespace imgtool::dockerfiles {
namespace {

struct Rule {
  const char* id;
  std::regex pattern;
  const char* message;
};

const std::vector<Rule>& rules() {
  static const auto icase = std::regex::ECMAScript | std::regex::icase;
  static const std::vector<Rule> r = {
      {"wget-no-check-certificate", std::regex(R"(--no-check-certificate\b)"),
       "--no-check-certificate disables TLS verification; remove it"},
      {"apt-unauthenticated", std::regex(R"(--allow-unauthenticated\b|--allow-insecure-repositories\b|AllowUnauthenticated|--force-yes\b)"),
       "apt installs unsigned packages; remove the flag and add the repository's key"},
      {"curl-insecure", std::regex(R"(\bcurl\b[^|;&]*\s(--insecure\b|-[a-zA-Z]*k[a-zA-Z]*\b))"),
       "curl -k/--insecure disables TLS verification; remove it"},
      {"pip-trusted-host", std::regex(R"(--trusted-host\b)"),
       "pip --trusted-host disables TLS verification for that host; use an https index"},
      {"add-remote-url", std::regex(R"(^\s*ADD\s+(--\S+\s+)*(https?|ftp)://)", icase),
       "ADD of a remote URL is not verified; download with curl -fsSL, check sha256sum -c, then use it"},
      {"pipe-to-shell",
       std::regex(R"(\b(curl|wget)\b[^|;&]*\|\s*(sudo\s+)?(-\S+\s+)*(ba|z|da|k)?sh\b)"),
       "a download is piped into a shell unchecked; save it, verify with sha256sum -c, then run it"},
  };
  return r;
}

// Logical lines: backslash continuations joined; first physical line number kept.
std::vector<std::pair<int, std::string>> logical_lines(const std::string& text) {
  std::vector<std::pair<int, std::string>> out;
  std::istringstream in(text);
  std::string line, cur;
  int n = 0, start = 0;
  while (std::getline(in, line)) {
    ++n;
    if (cur.empty()) start = n;
    bool cont = !line.empty() && line.back() == '\\';
    cur += cont ? line.substr(0, line.size() - 1) + " " : line;
    if (!cont) {
      out.push_back({start, cur});
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back({start, cur});
  return out;
}

bool is_comment(const std::string& s) {
  auto p = s.find_first_not_of(" \t");
  return p != std::string::npos && (s[p] == '#' || s.compare(p, 3, "{{!") == 0);
}

}  // namespace

std::string LintFinding::str() const {
  return file + ":" + std::to_string(line) + ": " + message + " [" + rule + "]";
}

std::vector<LintFinding> lint_text(const std::string& text, const std::string& file_label) {
  std::vector<LintFinding> found;
  for (auto& [line, s] : logical_lines(text)) {
    if (is_comment(s)) continue;
    for (auto& r : rules())
      if (std::regex_search(s, r.pattern)) found.push_back({file_label, line, r.id, r.message});
  }
  return found;
}

std::string format_findings(const std::vector<LintFinding>& findings) {
  std::string s;
  for (auto& f : findings) s += (s.empty() ? "" : "\n") + f.str();
  return s;
}

}  // namespace imgtool::dockerfiles
