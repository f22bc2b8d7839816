// The engine seam without an engine: the argv the real engine runs, the fake's
// contract (what builder/, verify/ and the nightly tests rely on), and that the
// real engine reaches only the engine $DOCKER_HOST names.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "core/error.h"
#include "engine/docker_engine.h"
#include "engine/fake_engine.h"
#include "image/copy.h"

using namespace imgtool;
using namespace imgtool::engine;

namespace {

bool has_seq(const std::vector<std::string>& v, const std::string& a, const std::string& b) {
  for (size_t i = 0; i + 1 < v.size(); ++i)
    if (v[i] == a && v[i + 1] == b) return true;
  return false;
}

struct DockerHost {
  std::optional<std::string> saved;
  explicit DockerHost(const char* value) {
    if (const char* v = std::getenv("DOCKER_HOST")) saved = v;
    setenv("DOCKER_HOST", value, 1);
  }
  ~DockerHost() { saved ? setenv("DOCKER_HOST", saved->c_str(), 1) : unsetenv("DOCKER_HOST"); }
};

}  // namespace

TEST_CASE("run_argv: --rm and the name first, no --gpus for none, mounts read-only, image before its args") {
  RunRequest r{.image = "img:1",
               .name = "n",
               .gpus = "none",
               .shm_size = "2g",
               .flags = {"--ulimit", "memlock=-1"},
               .mounts = {{"/p", "/imgtool-probe", true}},
               .entrypoint = "python3",
               .args = {"/imgtool-probe/probe.py"}};
  auto a = run_argv(r);
  CHECK(std::vector<std::string>(a.begin(), a.begin() + 5) ==
        std::vector<std::string>{"docker", "run", "--rm", "--name", "n"});
  CHECK(std::find(a.begin(), a.end(), "--gpus") == a.end());
  CHECK(has_seq(a, "--shm-size", "2g"));
  CHECK(has_seq(a, "--ulimit", "memlock=-1"));
  CHECK(has_seq(a, "-v", "/p:/imgtool-probe:ro"));
  CHECK(has_seq(a, "--entrypoint", "python3"));
  CHECK(has_seq(a, "img:1", "/imgtool-probe/probe.py"));
  r.gpus = "all";
  CHECK(has_seq(run_argv(r), "--gpus", "all"));
}

TEST_CASE("run_argv: every container is fenced in, right after its name, whatever the request") {
  RunRequest r{.image = "img:1", .name = "n"};
  auto a = run_argv(r);
  CHECK(std::vector<std::string>(a.begin() + 5, a.begin() + 5 + isolation_flags().size()) == isolation_flags());
  CHECK(has_seq(a, "--network", "none"));
  CHECK(has_seq(a, "--cap-drop", "ALL"));
  CHECK(has_seq(a, "--security-opt", "no-new-privileges"));
  CHECK(has_seq(a, "--pids-limit", "4096"));
  CHECK(has_seq(a, "--log-driver", "none"));
  // A memory limit on every container: three quarters of the host's RAM, unless the request sets one.
  CHECK(has_seq(a, "--memory", std::to_string(default_memory_limit())));
  CHECK(default_memory_limit() > (uint64_t{1} << 30));
  r.flags = {"--memory", "8g"};
  auto limited = run_argv(r);
  CHECK(has_seq(limited, "--memory", "8g"));
  CHECK(std::count(limited.begin(), limited.end(), "--memory") == 1);
}

TEST_CASE("admit_flags: a run profile's settings pass; anything that would widen the fence is refused") {
  auto ok = admit_flags({"--ulimit", "memlock=-1", "--user", "1000:1000", "-e", "A=1", "--cpus", "8", "--memory", "32g",
                         "--ipc", "private"});
  CHECK(ok.refused.empty());
  CHECK(ok.admitted.size() == 12);
  for (std::vector<std::string> bad : std::vector<std::vector<std::string>>{{"--cap-add", "SYS_ADMIN"},
                                                                            {"--privileged", "true"},
                                                                            {"--network", "host"},
                                                                            {"--ipc", "host"},
                                                                            {"--pid", "host"},
                                                                            {"--device", "/dev/sda"},
                                                                            {"--security-opt", "seccomp=unconfined"},
                                                                            {"-v", "/:/host"},
                                                                            {"--pids-limit", "-1"},
                                                                            {"--runtime", "runc"},
                                                                            {"--ulimit"}}) {
    auto f = admit_flags(bad);
    CHECK(f.admitted.empty());
    REQUIRE(f.refused.size() == 1);
    CHECK_THROWS_AS(run_argv({.image = "img:1", .name = "n", .flags = bad}), InputError);
  }
  // A refused flag in the middle drops only itself.
  auto mixed = admit_flags({"--user", "1000", "--ipc", "host", "-e", "B=2"});
  CHECK(mixed.admitted == std::vector<std::string>{"--user", "1000", "-e", "B=2"});
  CHECK(mixed.refused == std::vector<std::string>{"--ipc host"});
  // The fake keeps the real engine's contract.
  FakeEngine e;
  e.add_image({"img:1"}, {});
  CHECK_THROWS_AS(e.run({.image = "img:1", .name = "c", .flags = {"--cap-add", "ALL"}}), InputError);
}

TEST_CASE("build_argv: labels and target, context last") {
  BuildRequest b{.context = "/ctx",
                 .dockerfile = "/ctx/Dockerfile",
                 .image = "paddle:a",
                 .target = "build",
                 .labels = {{"io.imgtool.tag", "a"}}};
  auto a = build_argv(b, "/tmp/iid");
  CHECK(has_seq(a, "--iidfile", "/tmp/iid"));
  CHECK(std::find(a.begin(), a.end(), "--force-rm") != a.end());  // no failed step's container left behind
  CHECK(has_seq(a, "--target", "build"));
  CHECK(has_seq(a, "--label", "io.imgtool.tag=a"));
  CHECK(a.back() == "/ctx");
  CHECK(std::find(a.begin(), a.end(), "--no-cache") == a.end());
  b.no_cache = true;  // a reproduction runs every step again
  auto again = build_argv(b, "/tmp/iid");
  CHECK(std::find(again.begin(), again.end(), "--no-cache") != again.end());
}

TEST_CASE("fake: a build makes an image whose ID is its config digest, with the request's labels; save serves it") {
  FakeEngine e;
  auto r = e.build({.image = "paddle:a", .labels = {{"io.imgtool.inputs-hash", "sha256:1"}}});
  REQUIRE(r.ok());
  auto i = e.inspect("paddle:a");
  REQUIRE(i);
  CHECK(i->id == r.image_id);
  CHECK(i->labels.at("io.imgtool.inputs-hash") == "sha256:1");
  CHECK(e.inspect(r.image_id)->repo_tags == std::vector<std::string>{"paddle:a"});
  auto src = e.save(r.image_id);
  CHECK(src->manifest().config().digest == r.image_id);
  // load: the image comes back under a new name with the same ID
  FakeEngine other;
  auto loaded = other.load(*src, "copy:1");
  CHECK(loaded.blobs == 1);
  CHECK(other.inspect("copy:1")->id == r.image_id);
  CHECK(other.inspect("copy:1")->labels.at("io.imgtool.inputs-hash") == "sha256:1");
  CHECK(e.calls ==
        std::vector<std::string>{"build paddle:a", "inspect paddle:a", "inspect " + r.image_id, "save " + r.image_id});
}

TEST_CASE("fake: a rebuild moves the name; the old image stays reachable by ID; a script injects faults") {
  FakeEngine e;
  e.build_script["paddle:a"] = {"ok", "i/o timeout", "timeout", "throw:engine connection refused"};
  auto first = e.build({.image = "paddle:a"});
  CHECK(first.ok());
  auto failed = e.build({.image = "paddle:a"});
  CHECK_FALSE(failed.ok());
  CHECK(failed.run.err == "i/o timeout");
  CHECK(e.build({.image = "paddle:a"}).run.timed_out);
  CHECK_THROWS_AS(e.build({.image = "paddle:a"}), Error);
  auto second = e.build({.image = "paddle:a"});  // script used up: ok
  CHECK(second.image_id != first.image_id);
  CHECK(e.inspect("paddle:a")->id == second.image_id);
  CHECK(e.inspect(first.image_id)->repo_tags.empty());
  CHECK(e.builds.size() == 5);
}

TEST_CASE("fake: run answers from on_run; remove untags, then reports absence; unreachable throws retryable") {
  FakeEngine e;
  auto img = e.add_image({"img:1"}, {.labels = {{"io.imgtool.variant", "cpu"}}});
  e.on_run = [](const RunRequest& r) { return RunResult{0, false, "{\"ran\": \"" + r.name + "\"}", ""}; };
  CHECK(e.run({.image = "img:1", .name = "c1"}).out == "{\"ran\": \"c1\"}");
  CHECK(e.run({.image = "missing:1", .name = "c2"}).exit_code == 125);
  CHECK(e.inspect("img") == std::nullopt);  // img means img:latest
  CHECK(e.remove("img:1"));
  CHECK_FALSE(e.inspect(img.id));
  CHECK_FALSE(e.remove("img:1"));
  e.unreachable = true;
  try {
    e.inspect("img:1");
    FAIL("an unreachable engine answered");
  } catch (const Error& err) {
    CHECK(err.retryable);
  }
}

TEST_CASE("real engine: every call goes to the engine $DOCKER_HOST names, never the default socket") {
  DockerHost h("unix:///tmp/imgtool-no-engine-here.sock");
  DockerEngine e;
  CHECK(e.socket() == "/tmp/imgtool-no-engine-here.sock");
  try {  // Engine API
    e.inspect("imgtool-base/debian:bookworm-py3");
    FAIL("inspect reached an engine");
  } catch (const Error& err) {
    CHECK(std::string(err.what()).find("/tmp/imgtool-no-engine-here.sock") != std::string::npos);
    CHECK(err.retryable);
  }
  try {  // docker CLI
    e.remove("imgtool-engine-test/none:1");
    FAIL("remove reached an engine");
  } catch (const Error& err) {
    CHECK(std::string(err.what()).find("/tmp/imgtool-no-engine-here.sock") != std::string::npos);
  }
}

TEST_CASE("real engine: a DOCKER_HOST the Engine API client cannot reach is refused, not replaced") {
  DockerHost h("tcp://10.0.0.1:2375");
  CHECK_THROWS_AS(DockerEngine(), InputError);
}
