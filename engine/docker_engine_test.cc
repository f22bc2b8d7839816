// The real engine against this host's Docker engine: build, inspect (one and
// several), run (output, exit code, a timeout removes the container), save →
// load round trip (same image ID), remove. Images are named imgtool-engine-test/…
#include "engine/docker_engine.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/fs.h"
#include "image/image.h"
#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::engine;
using namespace imgtool::testing;

namespace {

std::string pid() { return std::to_string(::getpid()); }

// Builds a label-only image FROM the local base (no RUN: cheap) once per binary.
const BuildResult& built(DockerEngine& e, const fs::path& dir) {
  static std::optional<BuildResult> r;
  if (!r) {
    write_file_atomic(dir / "Dockerfile", "FROM " + base_image() + "\nLABEL imgtool.engine.test=" + pid() + "\n");
    r = e.build({.context = dir,
                 .dockerfile = dir / "Dockerfile",
                 .image = "imgtool-engine-test/img:" + pid(),
                 .labels = {{"io.imgtool.tag", "engine-test"}},
                 .timeout = std::chrono::seconds(600),
                 .log_path = dir / "build.log"});
  }
  return *r;
}

struct Cleanup {
  DockerEngine& e;
  ~Cleanup() {
    for (auto n : {"imgtool-engine-test/img:" + pid(), "imgtool-engine-test/loaded:" + pid()}) try {
        e.remove(n);
      } catch (...) {
      }
  }
};

}  // namespace

TEST_CASE("real engine: build, inspect, run, timeout, save/load, remove") {
  ScratchDir dir("engine");
  DockerEngine e;
  Cleanup cleanup{e};
  const std::string name = "imgtool-engine-test/img:" + pid();
  const BuildResult& b = built(e, dir.path);
  INFO(b.run.err);
  REQUIRE(b.ok());
  CHECK(read_file(dir.path / "build.log").size() > 0);

  auto info = e.inspect(name);
  REQUIRE(info);
  CHECK(info->id == b.image_id);
  CHECK(info->labels.at("io.imgtool.tag") == "engine-test");
  CHECK(info->labels.at("imgtool.engine.test") == pid());
  CHECK(info->os == "linux");
  CHECK_FALSE(info->diff_ids.empty());
  CHECK(std::find(info->repo_tags.begin(), info->repo_tags.end(), name) != info->repo_tags.end());
  CHECK(e.inspect("imgtool-engine-test/none:" + pid()) == std::nullopt);
  auto all = e.inspect_all({name, "imgtool-engine-test/none:" + pid(), b.image_id});
  REQUIRE(all.size() == 3);
  CHECK(all[0]->id == b.image_id);
  CHECK_FALSE(all[1]);
  CHECK(all[2]->id == b.image_id);

  RunRequest ok{.image = b.image_id,
                .name = "imgtool-engine-test-run-" + pid(),
                .entrypoint = "sh",
                .args = {"-c", "echo out; echo err >&2; exit 3"},
                .timeout = std::chrono::seconds(120)};
  RunResult r = e.run(ok);
  CHECK(r.exit_code == 3);
  CHECK(r.out == "out\n");
  CHECK(r.err.find("err") != std::string::npos);

  RunRequest slow{.image = b.image_id,
                  .name = "imgtool-engine-test-slow-" + pid(),
                  .entrypoint = "sleep",
                  .args = {"60"},
                  .timeout = std::chrono::seconds(3)};
  RunResult t = e.run(slow);
  CHECK(t.timed_out);
  auto ps = run({"docker", "ps", "-a", "-q", "--filter", "name=" + slow.name});
  CHECK(ps.out.empty());  // the timed-out container was removed

  auto src = e.save(b.image_id);
  CHECK(src->manifest().config().digest == b.image_id);
  const std::string loaded = "imgtool-engine-test/loaded:" + pid();
  auto lr = e.load(*src, loaded);
  CHECK(lr.blobs >= 2);
  CHECK(e.inspect(loaded)->id == b.image_id);

  CHECK(e.remove(loaded));
  CHECK_FALSE(e.remove(loaded));
  CHECK(e.inspect(name));  // still there under its own name
}

TEST_CASE("real engine: the image-ID file is private to the build, never at a predictable /tmp name") {
  // The old scheme: docker build --iidfile /tmp/imgtool-iid-<pid>-<n>, read back after the build.
  // Another local user rewriting that name in a loop made the ID read back theirs: the ID decides
  // what is smoked, gated, pushed and signed.
  ScratchDir dir("engine-iid");
  const std::string fake = "sha256:" + std::string(64, 'f');
  std::atomic<bool> done{false};
  std::thread attacker([&] {
    while (!done)
      for (int n = 1; n <= 20; ++n) {
        std::ofstream f(fs::temp_directory_path() / ("imgtool-iid-" + pid() + "-" + std::to_string(n)),
                        std::ios::trunc);
        f << fake;
      }
  });
  DockerEngine e;
  write_file_atomic(dir.path / "Dockerfile", "FROM " + base_image() + "\nLABEL imgtool.engine.iid=" + pid() + "\n");
  const std::string name = "imgtool-engine-test/iid:" + pid();
  BuildResult b = e.build({.context = dir.path,
                           .dockerfile = dir.path / "Dockerfile",
                           .image = name,
                           .timeout = std::chrono::seconds(600),
                           .log_path = dir.path / "build.log"});
  done = true;
  attacker.join();
  for (int n = 1; n <= 20; ++n)
    fs::remove(fs::temp_directory_path() / ("imgtool-iid-" + pid() + "-" + std::to_string(n)));
  REQUIRE(b.ok());
  auto info = e.inspect(name);
  REQUIRE(info);
  CHECK(b.image_id != fake);
  CHECK(b.image_id == info->id);
  e.remove(name);
}

TEST_CASE("real engine: a failing classic build leaves no stopped container behind") {
  ScratchDir dir("engine-fail");
  DockerEngine e;
  const std::string marker = "imgtool-engine-test-fail-" + pid();
  write_file_atomic(dir.path / "Dockerfile", "FROM " + base_image() + "\nRUN echo " + marker + " && exit 3\n");
  auto containers = [&] {
    return run({"docker", "ps", "-a", "--no-trunc", "--filter", "status=exited", "--format", "{{.Command}}"},
               {.timeout = std::chrono::seconds(60)})
        .out;
  };
  auto r = e.build({.context = dir.path,
                    .dockerfile = dir.path / "Dockerfile",
                    .image = "imgtool-engine-test/fail:" + pid(),
                    .timeout = std::chrono::seconds(600),
                    .log_path = dir.path / "build.log"});
  CHECK(!r.ok());
  CHECK(read_file(dir.path / "build.log").find(marker) != std::string::npos);
  CHECK(containers().find(marker) == std::string::npos);
}

TEST_CASE("real engine: list_images by label, and a rebuilt name leaves the old image dangling") {
  ScratchDir dir("engine-list");
  DockerEngine e;
  const std::string name = "imgtool-engine-test/list:" + pid(), label = "imgtool.engine.list=" + pid();
  auto build = [&](const std::string& text) {
    write_file_atomic(dir.path / "Dockerfile", "FROM " + base_image() + "\nLABEL imgtool.engine.list=" + pid() +
                                                   " imgtool.engine.text=" + text + "\n");
    auto r = e.build({.context = dir.path,
                      .dockerfile = dir.path / "Dockerfile",
                      .image = name,
                      .timeout = std::chrono::seconds(600),
                      .log_path = dir.path / "build.log"});
    REQUIRE(r.ok());
    return r.image_id;
  };
  std::string first = build("one");
  auto listed = e.list_images({.labels = {label}});
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].id == first);
  CHECK(listed[0].repo_tags == std::vector<std::string>{name});
  CHECK(listed[0].labels.at("imgtool.engine.text") == "one");
  CHECK(e.list_images({.labels = {label}, .dangling = true}).empty());
  CHECK(e.list_images({.labels = {label, "imgtool.engine.text=two"}}).empty());

  std::string second = build("two");
  auto dangling = e.list_images({.labels = {label}, .dangling = true});
  REQUIRE(dangling.size() == 1);
  CHECK(dangling[0].id == first);
  CHECK(dangling[0].repo_tags.empty());  // no "<none>:<none>"
  CHECK(e.list_images({.labels = {label, "imgtool.engine.text=two"}}).at(0).id == second);
  CHECK(e.remove(first));
  CHECK(e.remove(name));
  CHECK(e.list_images({.labels = {label}}).empty());
}

TEST_CASE("real engine: the build log grows while docker builds (tail -f follows it)") {
  ScratchDir dir("engine-live-log");
  DockerEngine e;
  const std::string name = "imgtool-engine-test/live:" + pid(), first = "imgtool-first-" + pid(),
                    second = "imgtool-second-" + pid();
  // printf's output differs from the command docker echoes in its "Step 2/2 : RUN …" line.
  write_file_atomic(dir.path / "Dockerfile", "FROM " + base_image() + "\nRUN printf 'imgtool-%s-%s\\n' first " + pid() +
                                                 " && sleep 8 && printf 'imgtool-%s-%s\\n' second " + pid() + "\n");
  fs::path log = dir.path / "build.log";
  auto building = std::async(std::launch::async, [&] {
    return e.build({.context = dir.path,
                    .dockerfile = dir.path / "Dockerfile",
                    .image = name,
                    .timeout = std::chrono::seconds(600),
                    .log_path = log});
  });
  // Read the log as `tail -f` would, while the build runs.
  bool seen_first_while_running = false, second_already = false;
  for (int i = 0; i < 600 && building.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready; ++i) {
    std::string now = fs::exists(log) ? read_file(log) : "";
    if (now.find(first) != std::string::npos) {
      seen_first_while_running = true;
      second_already = now.find(second) != std::string::npos;
      break;
    }
  }
  CHECK(seen_first_while_running);
  CHECK_FALSE(second_already);  // the RUN step was still sleeping: the log was read mid-build
  BuildResult b = building.get();
  INFO(b.run.out);
  CHECK(b.ok());
  std::string all = read_file(log);
  CHECK(all.rfind("$ ", 0) == 0);  // the command line first
  CHECK(all.find(second) != std::string::npos);
  CHECK(all.find("[imgtool] exit 0") != std::string::npos);  // the outcome last
  CHECK(b.run.out.find(first) != std::string::npos);         // and the result holds the output too
  e.remove(name);
}

namespace {

// The created container's configuration as the engine holds it (`docker inspect`), read while it
// runs: `--rm` removes it at the end.
nlohmann::json inspect_while_running(const std::string& name) {
  for (int i = 0; i < 600; ++i) {
    auto r = run({"docker", "inspect", name}, {.timeout = std::chrono::seconds(30)});
    if (r.ok()) {
      auto j = nlohmann::json::parse(r.out, nullptr, false);
      if (j.is_array() && !j.empty() && j[0].value("/State/Running"_json_pointer, false)) return j[0];
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return nullptr;
}

}  // namespace

TEST_CASE(
    "real engine: the container runs fenced in — no network, no capability, no new privileges, a pids limit, no engine "
    "log") {
  DockerEngine e;
  const std::string name = "imgtool-engine-test-fence-" + pid();
  // Inside: the effective capabilities, no_new_privs, the pids cgroup's limit (v1 or v2) and the
  // network interfaces; then it waits to be inspected.
  RunRequest req{.image = base_image(),
                 .name = name,
                 .flags = {"--user", "0:0"},
                 .entrypoint = "sh",
                 .args = {"-c",
                          "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/self/status; "
                          "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max; "
                          "echo net: $(ls /sys/class/net); sleep 60"},
                 .timeout = std::chrono::seconds(180)};
  auto running = std::async(std::launch::async, [&] { return e.run(req); });
  nlohmann::json c = inspect_while_running(name);
  run({"docker", "rm", "-f", name}, {.timeout = std::chrono::seconds(60)});
  RunResult r = running.get();
  REQUIRE_MESSAGE(c.is_object(), r.err);
  const auto& hc = c["HostConfig"];
  INFO(hc.dump(2));
  CHECK(hc["NetworkMode"] == "none");
  CHECK(hc["CapDrop"] == nlohmann::json::array({"ALL"}));
  CHECK((hc["CapAdd"].is_null() || hc["CapAdd"].empty()));
  CHECK(hc["SecurityOpt"] == nlohmann::json::array({"no-new-privileges"}));
  CHECK(hc["PidsLimit"] == kPidsLimit);
  CHECK(hc["LogConfig"]["Type"] == "none");
  CHECK(hc["Privileged"] == false);
  CHECK(hc["AutoRemove"] == true);
  // What the process inside sees, running as root.
  INFO(r.out);
  CHECK(r.out.find("CapEff:\t0000000000000000") != std::string::npos);
  CHECK(r.out.find("CapPrm:\t0000000000000000") != std::string::npos);
  CHECK(r.out.find("NoNewPrivs:\t1") != std::string::npos);
  CHECK(r.out.find("\n" + std::to_string(kPidsLimit) + "\n") != std::string::npos);
  CHECK(r.out.find("net: lo\n") != std::string::npos);
}

TEST_CASE("real engine: a container writing far more than the cap is cut, with a note, and still ends normally") {
  DockerEngine e;
  // 256 MiB on stdout (64 times the cap) and 32 MiB on stderr, at the same time.
  RunRequest req{.image = base_image(),
                 .name = "imgtool-engine-test-flood-" + pid(),
                 .entrypoint = "sh",
                 .args = {"-c",
                          "head -c 33554432 /dev/zero | tr '\\0' e >&2 & head -c 268435456 /dev/zero | tr '\\0' o; "
                          "wait; exit 7"},
                 .timeout = std::chrono::seconds(300)};
  RunResult r = e.run(req);
  CHECK(r.exit_code == 7);
  CHECK_FALSE(r.timed_out);
  CHECK(r.out_dropped == (256u << 20) - kMaxRunOutput);
  CHECK(r.err_dropped == (32u << 20) - kMaxRunOutput);
  CHECK(r.out == std::string(kMaxRunOutput, 'o') + cut_note("stdout", kMaxRunOutput, r.out_dropped));
  CHECK(r.err.size() == kMaxRunOutput + cut_note("stderr", kMaxRunOutput, r.err_dropped).size());
  CHECK(r.err.find("[imgtool] stderr cut at 4194304 bytes") != std::string::npos);
}
