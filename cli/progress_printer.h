// How `build` and `nightly` show progress on stderr (builder::ProgressPrinter): one redrawn line per
// running build on a terminal; plain lines when stderr is not a TTY or NO_COLOR is set; only FAILED
// lines with --quiet. stdout (the summary, --json) is never touched.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "builder/build_driver.h"

namespace imgtool::cli {

// Sets opt.on_event and opt.on_progress to one printer on std::cerr.
inline void print_progress(builder::BuildOptions& opt, const std::string& prefix, bool quiet) {
  auto mode = builder::ProgressPrinter::mode_for(quiet, ::isatty(2) == 1, std::getenv("NO_COLOR"));
  auto printer = std::make_shared<builder::ProgressPrinter>(std::cerr, prefix, mode);
  opt.on_event = [printer](const std::string& l) { printer->line(l); };
  opt.on_progress = [printer](const builder::ProgressEvent& e) { printer->progress(e); };
}

}  // namespace imgtool::cli
