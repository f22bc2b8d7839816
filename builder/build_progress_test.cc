// Live build progress: the step parser (classic and BuildKit lines) and the watcher on a log that grows.
#include <doctest/doctest.h>

#include <unistd.h>

#include <fstream>
#include <mutex>
#include <thread>

#include "builder/build_progress.h"

using namespace imgtool::builder;

TEST_CASE("parse_build_progress: classic and BuildKit step lines; the last line; no step yet") {
  auto c = parse_build_progress("Sending build context\nStep 1/9 : FROM base\n ---> 1234\nStep 3/9 : RUN pip install x\n"
                                " ---> Running in abc\nCollecting paddlepaddle==3.2.0\n\n");
  CHECK(c.step == 3);
  CHECK(c.total == 9);
  CHECK(c.last_line == "Collecting paddlepaddle==3.2.0");
  auto k = parse_build_progress("#5 [build 2/5] RUN apt-get update\n#5 0.512 Get:1 http://deb\n#6 [4/7] COPY wheels /w\n");
  CHECK(k.step == 4);
  CHECK(k.total == 7);
  CHECK(k.last_line == "#6 [4/7] COPY wheels /w");
  auto none = parse_build_progress("Step x/9 : nope\n#5 [internal] load metadata\nStep 3/9 no colon\n");
  CHECK(none.step == 0);
  CHECK(parse_build_progress(std::string(300, 'x')).last_line.size() < 200);  // long lines are cut
  // Terminal control in build output never reaches the user's terminal.
  CHECK(parse_build_progress("Step 2/3 : RUN x\n\x1b[31mred\x1b[0m \x1b]0;title\x07ok\r\n").last_line == "red ]0;titleok");
}

TEST_CASE("ProgressWatcher: one line per step change while the log grows; nothing after forget") {
  auto log = std::filesystem::temp_directory_path() / ("imgtool-progress-" + std::to_string(::getpid()) + ".log");
  std::ofstream(log) << "$ docker build\n";
  std::mutex mu;
  std::vector<std::string> lines;
  {
    ProgressWatcher w([&](const std::string& l) {
      std::lock_guard<std::mutex> g(mu);
      lines.push_back(l);
    }, std::chrono::milliseconds(20));
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
  REQUIRE(lines.size() == 3);
  CHECK(lines[2].rfind("build 3.2.0: step 3/3, ", 0) == 0);
  CHECK(lines[0].rfind("build 3.2.0: step 1/3, ", 0) == 0);
  CHECK(lines[1].rfind("build 3.2.0: step 2/3, ", 0) == 0);
  CHECK(lines[1].find(": Collecting numpy") != std::string::npos);
}
