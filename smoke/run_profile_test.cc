// The one rule by which a run profile reaches a smoke run (smoke/run_profile.h), pinned: the
// `smoke`, `verify` and `nightly` --profile flags all go through apply_profile().
#include "smoke/run_profile.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "engine/fake_engine.h"
#include "tests/test_dirs.h"

using namespace imgtool;
using namespace imgtool::smoke;

namespace {

runconf::RunSpec profile(const std::string& name, std::vector<std::string> sets = {}) {
  return runconf::load_profile({{name}, std::move(sets), {imgtool::testing::source_dir() + "/run/profiles"}});
}

// --gpus as given (CLI default "auto"), then the profile applied.
SmokeOptions applied(const std::string& user_gpus, const runconf::RunSpec& p) {
  SmokeOptions o;
  o.gpus = user_gpus;
  apply_profile(p, o);
  return o;
}

// The --gpus the runner passes to docker for an image of `variant` (fake engine, GPU host); "" = no flag.
std::string docker_gpus(const SmokeOptions& applied_options, const std::string& variant) {
  engine::FakeEngine fake;
  fake.add_image({"img:1"}, {.id = "sha256:abc", .labels = {{"io.imgtool.variant", variant}}});
  fake.on_run = [](const engine::RunRequest&) { return RunResult{0, false, R"({"verdict": {"status": "pass"}})", ""}; };
  SmokeOptions o = applied_options;
  o.image = "img:1";
  run_smoke(o, fake);
  auto argv = engine::run_argv(fake.runs.at(0));
  auto at = std::find(argv.begin(), argv.end(), "--gpus");
  return at == argv.end() ? "" : *(at + 1);
}

}  // namespace

TEST_CASE("--gpus auto: the user's --gpus wins; auto takes the profile's; auto alone follows the image") {
  // The user's value wins over any profile.
  CHECK(applied("1", profile("detection")).gpus == "1");
  CHECK(applied("none", profile("ocr", {"gpus=2"})).gpus == "none");
  CHECK(applied("device=1", profile("base", {"gpus=all"})).gpus == "device=1");
  // auto + a profile that names GPUs: the profile's.
  CHECK(applied("auto", profile("detection")).gpus == "all");
  CHECK(applied("auto", profile("ocr", {"gpus=2"})).gpus == "2");
  CHECK(applied("auto", profile("ocr", {"gpus=0"})).gpus == "none");
  CHECK(applied("auto", profile("ocr", {"gpu_devices=0 1"})).gpus == "\"device=0,1\"");
  // auto + a profile that says auto (base.yaml, inherited by ocr): auto stays, and the image decides.
  SmokeOptions left = applied("auto", profile("ocr"));
  CHECK(left.gpus == "auto");
  CHECK(docker_gpus(left, "gpu") == "all");
  CHECK(docker_gpus(left, "cpu") == "");                                         // no --gpus flag
  CHECK(docker_gpus(applied("auto", profile("ocr", {"gpus=0"})), "gpu") == "");  // the profile said none: no --gpus
  // The rule itself, per host (gpu_host.h).
  CHECK(resolve_gpus("auto", "gpu", GpuHost::gpu) == "all");
  CHECK(resolve_gpus("auto", "gpu", GpuHost::none) == "none");
  CHECK(resolve_gpus("", "cpu", GpuHost::gpu) == "none");
  CHECK(resolve_gpus("auto", "", GpuHost::gpu) == "none");
  CHECK(resolve_gpus("device=0", "cpu", GpuHost::gpu) == "device=0");
}

TEST_CASE("a profile's /dev/shm unless --shm-size is given; its other settings and promises are appended") {
  CHECK(applied("auto", profile("ocr")).shm_size == "16g");
  SmokeOptions mine;
  mine.shm_size = "64m";
  mine.probe_args = {"--reps", "3"};
  apply_profile(profile("ocr"), mine);
  CHECK(mine.shm_size == "64m");
  CHECK(mine.probe_args == std::vector<std::string>{"--reps", "3", "--expect-memlock", "-1", "--expect-stack",
                                                    "67108864", "--expect-shm", std::to_string(16ull << 30),
                                                    "--expect-user", "1000:1000"});
  CHECK(mine.run_flags == std::vector<std::string>{"--ulimit", "memlock=-1", "--ulimit", "stack=67108864", "--user",
                                                   "1000:1000", "-e", "FLAGS_allocator_strategy=auto_growth", "-e",
                                                   "PYTHONUNBUFFERED=1", "--cpus", "8", "--memory", "32g"});
  // The nightly's smoke cache key changes with the settings, and is the plain --gpus without them.
  SmokeOptions plain;
  plain.gpus = "auto";
  CHECK(settings_key(plain) == "auto");
  plain.gpu_host = GpuHost::none;
  CHECK(settings_key(plain) == "auto (no GPU host)");
  CHECK(settings_key(mine).rfind("none --shm-size 64m --ulimit memlock=-1", 0) == 0);
}
