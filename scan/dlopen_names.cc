#include "scan/dlopen_names.h"

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

void DlopenNames::end_run() {
  if (!overlong_ && !run_.empty()) {
    size_t start = 0;
    while (start <= run_.size()) {
      size_t semi = run_.find(';', start);
      std::string item = run_.substr(start, semi == std::string::npos ? std::string::npos : semi - start);
      if (is_library_name(item)) {
        if (names_.size() < kMaxNames)
          names_.insert(item);
        else if (!names_.count(item))
          truncated_ = true;
      }
      if (semi == std::string::npos) break;
      start = semi + 1;
    }
  }
  run_.clear();
  overlong_ = false;
}

void DlopenNames::feed(const char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    char c = p[i];
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

void DlopenNames::finish() { run_.clear(), overlong_ = false; }

}  // namespace imgtool::scan
