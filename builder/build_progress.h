// Live progress of running docker builds, read from their logs (which grow while docker builds:
// core/process.h writes the child's output straight into them). A watcher thread looks at each
// running build's log every `every` and, when its step changes, emits a ProgressEvent — as a plain
// line (to_line): "build <name>: step 3/9, 42 s: <the log's last line>" — and a `done` event when
// the build ends. Classic builder lines "Step N/M : …" and BuildKit plain lines "#k [stage a/b] …" /
// "#k [a/b] …" give the step. The library never prints: ProgressPrinter (a stream the CLI passes)
// keeps one line per running build on a terminal, or prints plain lines.
#pragma once
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace imgtool::builder {

struct BuildStepProgress {
  int step = 0, total = 0;  // 0/0 until a step line is seen
  std::string last_line;    // the last non-empty line (trimmed, at most 160 characters)
};

BuildStepProgress parse_build_progress(std::string_view log);

struct ProgressEvent {
  std::string name;  // the cell's tag, or "stage <key>"
  BuildStepProgress progress;
  long long seconds = 0;  // since the build started
  bool done = false;      // the build ended (its line goes)
};

// "build <name>: step N/M, T s: <last line>"
std::string to_line(const ProgressEvent& e);

class ProgressWatcher {
 public:
  using Emit = std::function<void(const ProgressEvent&)>;
  explicit ProgressWatcher(Emit emit, std::chrono::milliseconds every = std::chrono::seconds(2));
  ~ProgressWatcher();
  ProgressWatcher(const ProgressWatcher&) = delete;
  ProgressWatcher& operator=(const ProgressWatcher&) = delete;

  void watch(const std::string& name, const std::filesystem::path& log);
  // Stops watching `name`: first the step its log ended on if no event said it yet, then `done`.
  void forget(const std::string& name);

 private:
  struct Watched {
    std::filesystem::path log;
    std::chrono::steady_clock::time_point started;
    int reported_step = 0;
  };
  void loop();
  void poll(const std::string& only = "");  // "" = every watched build

  Emit emit_;
  std::chrono::milliseconds every_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::map<std::string, Watched> watched_;
  std::thread thread_;
};

// Prints a run's progress on a stream (the CLI passes std::cerr):
//   tty    one line per running build, kept at the bottom and redrawn in place ("\r", "ESC[K",
//          cursor up); every other line printed above that block;
//   plain  every line as it comes, no escape sequences (not a terminal, or NO_COLOR);
//   quiet  FAILED lines only (--quiet).
class ProgressPrinter {
 public:
  enum class Mode { tty, plain, quiet };
  static Mode mode_for(bool quiet, bool is_tty, const char* no_color);

  ProgressPrinter(std::ostream& out, std::string prefix, Mode mode, size_t width = 120);
  void line(const std::string& text);     // BuildOptions::on_event
  void progress(const ProgressEvent& e);  // BuildOptions::on_progress

 private:
  void clear_block();
  void draw_block();

  std::ostream& out_;
  std::string prefix_;
  Mode mode_;
  size_t width_;
  std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> live_;  // running build -> its line, in start order
  size_t drawn_ = 0;                                       // lines of the block on screen
};

}  // namespace imgtool::builder
