// Running external programs (docker, skopeo, python3) through Boost.Process.
// Every outside command of imgtool goes through run(), so tests and logs see
// one behaviour: argv (never a shell string), optional stdin, a timeout,
// stdout/stderr captured and optionally appended to a log file.
//
// Capture: by default each stream goes to a file in a private temp folder and is read back whole.
// With RunOptions::max_output (what the engine sets for every container: engine/engine.h) both
// streams come through pipes instead, read as they come on a thread of their own: at most
// max_output bytes of each are kept, the rest is read and dropped (so the child never blocks on a
// full pipe, and a container printing without end fills neither memory nor disk), and a cut
// stream ends with one line saying so (cut_note). RunResult::out_dropped/err_dropped count what
// was dropped.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace imgtool {

struct RunOptions {
  std::string stdin_data;                       // written to the child's stdin, then closed
  std::optional<std::chrono::seconds> timeout;  // none = wait forever
  std::string log_path;                         // if set, stdout+stderr go straight into this file (appended,
                                                // as they come: tail -f follows) and RunResult::out holds
                                                // both, merged in order (err stays empty)
  std::map<std::string, std::string> env;       // added to (overriding) the inherited environment
  std::string cwd;                              // empty = inherit
  size_t max_output = 0;                        // > 0: keep at most this many bytes of stdout and of stderr
                                                // (the rest is read and dropped, a note ends the stream);
                                                // 0 = keep everything. Ignored with log_path.
};

struct RunResult {
  int exit_code = -1;  // -1 if it could not start or was killed
  bool timed_out = false;
  std::string out;                            // stdout
  std::string err;                            // stderr
  uint64_t out_dropped = 0, err_dropped = 0;  // bytes read past RunOptions::max_output and dropped
  bool ok() const { return exit_code == 0 && !timed_out; }
};

// The line that ends a stream cut at `cap` bytes after `dropped` more were read: "\n[imgtool] stdout
// cut at 4194304 bytes: 1000 more bytes were read and dropped\n".
std::string cut_note(const std::string& stream, size_t cap, uint64_t dropped);

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
