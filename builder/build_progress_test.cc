// Live build progress: the step parser (classic and BuildKit lines) and the watcher on a log that grows.
#include "builder/build_progress.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

using namespace imgtool::builder;

TEST_CASE("parse_build_progress: classic and BuildKit step lines; the last line; no step yet") {
  auto c = parse_build_progress(
      "Sending build context\nStep 1/9 : FROM base\n ---> 1234\nStep 3/9 : RUN pip install x\n"
      " ---> Running in abc\nCollecting paddlepaddle==3.2.0\n\n");
  CHECK(c.step == 3);
  CHECK(c.total == 9);
  CHECK(c.last_line == "Collecting paddlepaddle==3.2.0");
  auto k =
      parse_build_progress("#5 [build 2/5] RUN apt-get update\n#5 0.512 Get:1 http://deb\n#6 [4/7] COPY wheels /w\n");
  CHECK(k.step == 4);
  CHECK(k.total == 7);
  CHECK(k.last_line == "#6 [4/7] COPY wheels /w");
  auto none = parse_build_progress("Step x/9 : nope\n#5 [internal] load metadata\nStep 3/9 no colon\n");
  CHECK(none.step == 0);
  CHECK(parse_build_progress(std::string(300, 'x')).last_line.size() < 200);  // long lines are cut
  // Terminal control in build output never reaches the user's terminal.
  CHECK(parse_build_progress("Step 2/3 : RUN x\n\x1b[31mred\x1b[0m \x1b]0;title\x07ok\r\n").last_line ==
        "red ]0;titleok");
}

TEST_CASE("ProgressWatcher: one line per step change while the log grows; nothing after forget") {
  auto log = std::filesystem::temp_directory_path() / ("imgtool-progress-" + std::to_string(::getpid()) + ".log");
  std::ofstream(log) << "$ docker build\n";
  std::mutex mu;
  std::vector<std::string> lines;
  {
    ProgressWatcher w(
        [&](const ProgressEvent& e) {
          std::lock_guard<std::mutex> g(mu);
          lines.push_back(e.done ? "done " + e.name : to_line(e));
        },
        std::chrono::milliseconds(20));
    w.watch("3.2.0", log);
    auto wait_for = [&](size_t n) {
      for (int i = 0; i < 200; ++i) {
        {
          std::lock_guard<std::mutex> g(mu);
          if (lines.size() >= n) return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    };
    std::ofstream(log, std::ios::app) << "Step 1/3 : FROM base\n";
    wait_for(1);
    std::ofstream(log, std::ios::app) << " ---> abc\nhello\n";  // same step: no new line
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ofstream(log, std::ios::app) << "Step 2/3 : RUN pip install\nCollecting numpy\n";
    wait_for(2);
    std::ofstream(log, std::ios::app) << "Step 3/3 : LABEL x\n";
    w.forget("3.2.0");  // the step it ended on is said at once, even between two polls
    std::ofstream(log, std::ios::app) << "Step 4/4 : after\n";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::filesystem::remove(log);
  REQUIRE(lines.size() == 4);
  CHECK(lines[2].rfind("build 3.2.0: step 3/3, ", 0) == 0);
  CHECK(lines[3] == "done 3.2.0");
  CHECK(lines[0].rfind("build 3.2.0: step 1/3, ", 0) == 0);
  CHECK(lines[1].rfind("build 3.2.0: step 2/3, ", 0) == 0);
  CHECK(lines[1].find(": Collecting numpy") != std::string::npos);
}

namespace {

ProgressEvent step(const std::string& name, int n, const std::string& last) { return {name, {n, 5, last}, 7, false}; }

}  // namespace

TEST_CASE("ProgressPrinter: a terminal keeps one redrawn line per running build; plain and quiet print no escapes") {
  std::ostringstream tty;
  ProgressPrinter t(tty, "build", ProgressPrinter::Mode::tty);
  t.progress(step("a", 1, "FROM base"));
  t.progress(step("b", 2, "RUN pip"));
  t.progress(step("a", 3, "COPY x"));  // a's line redrawn in place, b's kept
  t.line("built c in 3 s");            // printed above the block, the block drawn again below it
  t.progress({"a", {}, 9, true});      // a ended: its line goes
  std::string out = tty.str();
  const std::string up = "\033[1A\r\033[K";
  // What the terminal ends up showing, replayed: each "up" erases the line above.
  std::vector<std::string> screen;
  for (size_t p = 0; p < out.size();) {
    if (out.compare(p, up.size(), up) == 0) {
      screen.pop_back();
      p += up.size();
      continue;
    }
    size_t nl = out.find('\n', p);
    screen.push_back(out.substr(p, nl - p));
    p = nl + 1;
  }
  CHECK(screen == std::vector<std::string>{"build: built c in 3 s", "build: build b: step 2/5, 7 s: RUN pip"});
  CHECK(out.find("build a: step 3/5, 7 s: COPY x") != std::string::npos);

  std::ostringstream plain;
  ProgressPrinter p(plain, "build", ProgressPrinter::Mode::plain);
  p.progress(step("a", 1, "FROM base"));
  p.progress({"a", {}, 9, true});
  p.line("built a in 9 s");
  CHECK(plain.str() == "build: build a: step 1/5, 7 s: FROM base\nbuild: built a in 9 s\n");

  std::ostringstream quiet;
  ProgressPrinter q(quiet, "nightly", ProgressPrinter::Mode::quiet);
  q.progress(step("a", 1, "FROM base"));
  q.line("built a in 9 s");
  q.line("FAILED b: returned a non-zero code: 4");
  CHECK(quiet.str() == "nightly: FAILED b: returned a non-zero code: 4\n");

  CHECK(ProgressPrinter::mode_for(false, true, nullptr) == ProgressPrinter::Mode::tty);
  CHECK(ProgressPrinter::mode_for(false, true, "1") == ProgressPrinter::Mode::plain);  // NO_COLOR
  CHECK(ProgressPrinter::mode_for(false, false, nullptr) == ProgressPrinter::Mode::plain);
  CHECK(ProgressPrinter::mode_for(true, true, nullptr) == ProgressPrinter::Mode::quiet);
}
