// How `build` and `nightly` print the library's progress lines (BuildOptions::on_event) on stderr:
//   a terminal (stderr is a TTY, NO_COLOR unset): a build's "step N/M" line is redrawn in place
//     (one line, cut to 120 columns), every other line printed below it;
//   not a terminal, or NO_COLOR: every line as it comes, no escape sequences (CI logs);
//   --quiet: only FAILED lines.
// stdout (the summary, --json) is never touched.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>

namespace imgtool::cli {

inline std::function<void(const std::string&)> progress_printer(const std::string& prefix, bool quiet) {
  const char* no_color = std::getenv("NO_COLOR");
  bool tty = ::isatty(2) == 1 && !(no_color && *no_color);
  auto open_line = std::make_shared<bool>(false);  // a redrawn step line is on screen
  auto mu = std::make_shared<std::mutex>();
  return [prefix, quiet, tty, open_line, mu](const std::string& line) {
    bool failed = line.rfind("FAILED", 0) == 0;
    if (quiet && !failed) return;
    std::lock_guard<std::mutex> lock(*mu);
    bool step = line.rfind("build ", 0) == 0 && line.find(": step ") != std::string::npos;
    if (tty && step) {
      std::cerr << "\r\033[K" << (prefix + ": " + line).substr(0, 120) << std::flush;
      *open_line = true;
      return;
    }
    if (*open_line) std::cerr << "\r\033[K";
    *open_line = false;
    std::cerr << prefix << ": " << line << std::endl;
  };
}

}  // namespace imgtool::cli
