#include "dockerfiles/lint.h"

#include <cctype>
#include <sstream>
#include <string_view>

namespace imgtool::dockerfiles {
namespace {

// The rules are written out, not std::regex: the library recursed once per character of a
// line, so a long RUN line (a long matrix value rendered into it) crashed generate. Each
// matcher answers what the regular expression in its comment answered (lint_test checks them
// against those expressions) in time linear in the line for a given number of '|' (a matrix value
// holds none: cell_values refuses it).
using Line = std::string_view;

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool space(char c) { return std::isspace(static_cast<unsigned char>(c)); }
// \b after a word that ends at `end`.
bool word_ends(Line s, size_t end) { return end >= s.size() || !word_char(s[end]); }
size_t skip_spaces(Line s, size_t at) {
  while (at < s.size() && space(s[at])) ++at;
  return at;
}
size_t skip_non_spaces(Line s, size_t at) {
  while (at < s.size() && !space(s[at])) ++at;
  return at;
}
bool starts_icase(Line s, size_t at, Line word) {
  if (s.size() - std::min(at, s.size()) < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[at + i])) != word[i]) return false;
  return true;
}

// Each position where `word` stands as a whole word (\bword\b).
template <class F>
bool any_word(Line s, Line word, F&& at_end) {
  for (size_t i = s.find(word); i != Line::npos; i = s.find(word, i + 1))
    if ((i == 0 || !word_char(s[i - 1])) && word_ends(s, i + word.size()) && at_end(i + word.size())) return true;
  return false;
}

// flag\b
bool has_flag(Line s, Line flag) {
  for (size_t i = s.find(flag); i != Line::npos; i = s.find(flag, i + 1))
    if (word_ends(s, i + flag.size())) return true;
  return false;
}

bool no_check_certificate(Line s) { return has_flag(s, "--no-check-certificate"); }
bool trusted_host(Line s) { return has_flag(s, "--trusted-host"); }
// --allow-unauthenticated\b|--allow-insecure-repositories\b|AllowUnauthenticated|--force-yes\b
bool apt_unauthenticated(Line s) {
  return has_flag(s, "--allow-unauthenticated") || has_flag(s, "--allow-insecure-repositories") ||
         s.find("AllowUnauthenticated") != Line::npos || has_flag(s, "--force-yes");
}

// The end of the shell command a position is in: the next '|', ';' or '&' (or the line's end).
// Asked at increasing positions, it searches each stretch of the line once.
class CommandEnd {
 public:
  explicit CommandEnd(Line s) : s_(s) {}
  size_t at(size_t from) {
    if (!known_ || from > end_) end_ = std::min(s_.find_first_of("|;&", from), s_.size()), known_ = true;
    return end_;
  }

 private:
  Line s_;
  size_t end_ = 0;
  bool known_ = false;
};

// \bcurl\b[^|;&]*\s(--insecure\b|-[a-zA-Z]*k[a-zA-Z]*\b)
// Whether a flag starts at a position does not depend on which curl it follows: each position
// is looked at once, however many curls one command holds.
bool curl_insecure(Line s) {
  CommandEnd command(s);
  size_t looked = 0;
  return any_word(s, "curl", [&](size_t from) {
    size_t end = command.at(from);
    for (size_t i = std::max(from, looked); i < end; looked = ++i) {
      if (!space(s[i]) || i + 1 >= s.size() || s[i + 1] != '-') continue;
      if (s.compare(i + 1, 10, "--insecure") == 0 && word_ends(s, i + 11)) return true;
      size_t letters = i + 2;
      while (letters < s.size() && std::isalpha(static_cast<unsigned char>(s[letters]))) ++letters;
      if (s.substr(i + 2, letters - (i + 2)).find('k') != Line::npos && word_ends(s, letters)) return true;
    }
    return false;
  });
}

// \b(curl|wget)\b[^|;&]*\|\s*(sudo\s+)?(-\S+\s+)*(ba|z|da|k)?sh\b, after the download's command
// ends at `bar`.
bool shell_after_pipe(Line s, size_t bar) {
  if (bar >= s.size() || s[bar] != '|') return false;
  size_t at = skip_spaces(s, bar + 1);
  if (s.compare(at, 4, "sudo") == 0 && at + 4 < s.size() && space(s[at + 4])) at = skip_spaces(s, at + 4);
  while (at + 1 < s.size() && s[at] == '-' && !space(s[at + 1])) {  // -\S+\s+
    size_t end = skip_non_spaces(s, at);
    if (end >= s.size()) return false;
    at = skip_spaces(s, end);
  }
  for (Line shell : {"sh", "bash", "zsh", "dash", "ksh"})
    if (s.compare(at, shell.size(), shell) == 0 && word_ends(s, at + shell.size())) return true;
  return false;
}
bool pipe_to_shell(Line s) {
  for (Line download : {"curl", "wget"}) {
    CommandEnd command(s);
    size_t asked = Line::npos;  // every download in one command has the same answer: asked once
    bool found = any_word(s, download, [&](size_t from) {
      size_t bar = command.at(from);
      if (bar == asked) return false;
      asked = bar;
      return shell_after_pipe(s, bar);
    });
    if (found) return true;
  }
  return false;
}

// ^\s*ADD\s+(--\S+\s+)*(https?|ftp):// (any case)
bool add_remote_url(Line s) {
  size_t at = skip_spaces(s, 0);
  if (!starts_icase(s, at, "add") || at + 3 >= s.size() || !space(s[at + 3])) return false;
  at = skip_spaces(s, at + 3);
  while (s.compare(at, 2, "--") == 0 && at + 2 < s.size() && !space(s[at + 2])) {  // --\S+\s+
    size_t end = skip_non_spaces(s, at);
    if (end >= s.size()) return false;
    at = skip_spaces(s, end);
  }
  for (Line scheme : {"http://", "https://", "ftp://"})
    if (starts_icase(s, at, scheme)) return true;
  return false;
}

struct Rule {
  const char* id;
  bool (*found)(Line);
  const char* message;
};

const Rule kRules[] = {
    {"wget-no-check-certificate", no_check_certificate, "--no-check-certificate disables TLS verification; remove it"},
    {"apt-unauthenticated", apt_unauthenticated,
     "apt installs unsigned packages; remove the flag and add the repository's key"},
    {"curl-insecure", curl_insecure, "curl -k/--insecure disables TLS verification; remove it"},
    {"pip-trusted-host", trusted_host,
     "pip --trusted-host disables TLS verification for that host; use an https index"},
    {"add-remote-url", add_remote_url,
     "ADD of a remote URL is not verified; download with curl -fsSL, check sha256sum -c, then use it"},
    {"pipe-to-shell", pipe_to_shell,
     "a download is piped into a shell unchecked; save it, verify with sha256sum -c, then run it"},
};

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

std::string LintFinding::str() const { return file + ":" + std::to_string(line) + ": " + message + " [" + rule + "]"; }

std::vector<LintFinding> lint_text(const std::string& text, const std::string& file_label) {
  std::vector<LintFinding> found;
  for (auto& [line, s] : logical_lines(text)) {
    if (is_comment(s)) continue;
    for (auto& r : kRules)
      if (r.found(s)) found.push_back({file_label, line, r.id, r.message});
  }
  return found;
}

std::string format_findings(const std::vector<LintFinding>& findings) {
  std::string s;
  for (auto& f : findings) s += (s.empty() ? "" : "\n") + f.str();
  return s;
}

}  // namespace imgtool::dockerfiles
