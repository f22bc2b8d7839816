// Running external programs (docker, skopeo, python3) through Boost.Process.
// Every outside command of imgtool goes through run(), so tests and logs see
// one behaviour: argv (never a shell string), optional stdin, a timeout,
// stdout/stderr captured and optionally appended to a log file.
#pragma once
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace imgtool {

struct RunOptions {
  std::string stdin_data;                         // written to the child's stdin, then closed
  std::optional<std::chrono::seconds> timeout;    // none = wait forever
  std::string log_path;                           // if set, stdout+stderr go straight into this file (appended,
                                                  // as they come: tail -f follows) and RunResult::out holds
                                                  // both, merged in order (err stays empty)
  std::map<std::string, std::string> env;         // added to (overriding) the inherited environment
  std::string cwd;                                // empty = inherit
};

struct RunResult {
  int exit_code = -1;      // -1 if it could not start or was killed
  bool timed_out = false;
  std::string out;         // stdout
  std::string err;         // stderr
  bool ok() const { return exit_code == 0 && !timed_out; }
};

// Runs argv[0] (looked up in PATH) with the rest as arguments. Never throws for
// a non-zero exit; throws imgtool::Error only if the program cannot be found.
RunResult run(const std::vector<std::string>& argv, const RunOptions& opt = {});

// On SIGINT, SIGTERM or SIGHUP: SIGTERM to every child run() is waiting on, every private temp
// and uncommitted staging folder removed (core/signal_cleanup.h), then the signal's own default
// action. Without it a killed or Ctrl-C'd imgtool left its `docker build` running:
// builds run under timeout(1), which puts them in a process group of their own, out of reach
// of the terminal's signals. The CLI installs it once, at start.
void end_children_on_signal();

// True if `name` is found in PATH.
bool have_program(const std::string& name);

}  // namespace imgtool
