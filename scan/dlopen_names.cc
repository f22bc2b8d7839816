#include "scan/dlopen_names.h"

#include <cstring>

namespace imgtool::scan {

namespace {

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-';
}

}  // namespace

bool is_library_name(const std::string& s) {
  if (s.size() < 7 || s.rfind("lib", 0) != 0) return false;
  size_t so = s.find(".so");
  if (so == std::string::npos || so == 3) return false;
  for (size_t i = 3; i < so; ++i)
    if (!word_char(s[i])) return false;
  // ".so" then nothing, or ".<digits>" groups
  for (size_t i = so + 3; i < s.size();) {
    if (s[i] != '.' || i + 1 >= s.size()) return false;
    size_t j = i + 1;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    if (j == i + 1) return false;
    i = j;
  }
  return true;
}

// One more name into a bounded set: past kMaxNames a new one is dropped and said (truncated()).
void DlopenNames::keep(std::set<std::string>& set, const std::string& name) {
  if (set.size() < kMaxNames)
    set.insert(name);
  else if (!set.count(name))
    truncated_ = true;
}

void DlopenNames::end_run() {
  if (!overlong_ && !run_.empty()) {
    size_t start = 0;
    while (start <= run_.size()) {
      size_t semi = run_.find(';', start);
      std::string item = run_.substr(start, semi == std::string::npos ? std::string::npos : semi - start);
      if (is_library_name(item)) keep(names_, item);
      if (semi == std::string::npos) break;
      start = semi + 1;
    }
  }
  run_.clear();
  overlong_ = false;
}

// The last 10 bytes are `movabs $imm64, %reg` (REX.W 48/49, B8..BF) whose immediate reads "lib" + 5
// name characters: the head of a name built in code.
void DlopenNames::code_byte(unsigned char c) {
  std::memmove(window_, window_ + 1, sizeof window_ - 1);
  window_[9] = c;
  if (++seen_ < 10 || (window_[0] != 0x48 && window_[0] != 0x49) || window_[1] < 0xb8 || window_[1] > 0xbf) return;
  std::string head(reinterpret_cast<const char*>(window_ + 2), 8);
  if (head.rfind("lib", 0) != 0) return;
  for (size_t i = 3; i < 8; ++i)
    if (!word_char(head[i]) && head[i] != '.') return;
  keep(heads_, head);
}

// Every lib<word>.so[.<digits>]… inside the printable text gathered so far.
void DlopenNames::scan_text() {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  for (size_t i = text_.find("lib"); i != std::string::npos; i = text_.find("lib", i + 1)) {
    size_t j = i + 3;
    while (j < text_.size() && word_char(text_[j])) ++j;
    if (j == i + 3 || text_.compare(j, 3, ".so") != 0) continue;
    size_t k = j + 3;
    while (k + 1 < text_.size() && text_[k] == '.' && digit(text_[k + 1])) {
      ++k;
      while (k < text_.size() && digit(text_[k])) ++k;
    }
    std::string name = text_.substr(i, k - i);
    keep(embedded_, name);
  }
}

// Printable bytes gather in text_ (bounded: a full buffer is scanned and keeps its last 64 bytes, so
// a name across the cut is still whole once); any other byte ends the text.
void DlopenNames::text_byte(char c) {
  if (c >= 0x21 && c <= 0x7e) {
    text_ += c;
    if (text_.size() < 4 * kMaxRun) return;
    scan_text();
    text_.erase(0, text_.size() - 64);
    return;
  }
  if (!text_.empty()) scan_text();
  text_.clear();
}

void DlopenNames::feed(const char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    char c = p[i];
    code_byte(static_cast<unsigned char>(c));
    text_byte(c);
    if (c == '\0') {
      end_run();
    } else if (c >= 0x21 && c <= 0x7e) {
      if (run_.size() < kMaxRun)
        run_ += c;
      else
        overlong_ = true;
    } else {
      run_.clear();  // a non-printable byte: not inside a C string of a name
      overlong_ = true;
    }
  }
}

void DlopenNames::finish() {
  run_.clear(), overlong_ = false;
  text_byte('\0');
}

}  // namespace imgtool::scan
