// Live progress of running docker builds, read from their logs (which grow while docker builds:
// core/process.h writes the child's output straight into them). A watcher thread looks at each
// running build's log every `every` and, when its step changes, emits one plain line:
//   "build <name>: step 3/9, 42 s: <the log's last line>"
// Classic builder lines "Step N/M : …" and BuildKit plain lines "#k [stage a/b] …" / "#k [a/b] …"
// give the step; the library never prints (the CLI's on_event does, or --quiet drops it).
#pragma once
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace imgtool::builder {

struct BuildStepProgress {
  int step = 0, total = 0;  // 0/0 until a step line is seen
  std::string last_line;    // the last non-empty line (trimmed, at most 160 characters)
};

BuildStepProgress parse_build_progress(std::string_view log);

class ProgressWatcher {
 public:
  using Emit = std::function<void(const std::string&)>;
  explicit ProgressWatcher(Emit emit, std::chrono::milliseconds every = std::chrono::seconds(2));
  ~ProgressWatcher();
  ProgressWatcher(const ProgressWatcher&) = delete;
  ProgressWatcher& operator=(const ProgressWatcher&) = delete;

  void watch(const std::string& name, const std::filesystem::path& log);
  // Stops watching `name`, first emitting the step its log ended on if no line said it yet.
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

}  // namespace imgtool::builder
