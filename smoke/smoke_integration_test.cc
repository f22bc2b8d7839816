// `imgtool smoke` against the real Docker engine (no GPU on this host):
//  - a gpu-labelled image without --gpus: the report says exactly why the GPU part did not run;
//  - with --gpus all: docker's "could not select device driver" becomes the diagnosis with the fix;
//  - the real paddlepaddle CPU wheel in a gpu-labelled image fails with the CPU-only diagnosis;
//  - the same wheel in a cpu-labelled image passes (shm: a warning at Docker's 64 MB, clean with --shm-size 2g).
// Test images are built once and reused (a key label holds the recipe's hash).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/hash.h"
#include "tests/fixtures.h"
#include "tests/test_images.h"

using namespace imgtool;
using namespace imgtool::testing;
using nlohmann::json;

namespace {

json smoke(std::vector<std::string> args, int expect_rc) {
  args.insert(args.begin(), "smoke");
  args.push_back("--json");
  auto r = imgtool::testing::imgtool(args, {.timeout = std::chrono::seconds(900)});
  INFO("stdout: " << r.out.substr(0, 6000) << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == expect_rc);
  return json::parse(r.out);
}

std::string reasons(const json& j) { return j["verdict"]["reasons"].dump(); }

}  // namespace

TEST_CASE("gpu image without --gpus: says exactly why the GPU part did not run") {
  std::string img = labelled("imgtool-test/smoke-gpu:nopaddle", base_image(), "gpu");
  json j = smoke({img, "--gpus", "none"}, 1);  // the default, auto, would pass --gpus all to a gpu image
  const json& drv = j["probe"]["driver"];
  CHECK(drv["code"] == "no_gpus_flag");
  CHECK(drv["reason"].get<std::string>().find("libcuda.so.1") != std::string::npos);
  CHECK(j["probe"]["kernels"]["status"] == "skipped");
  CHECK(j["expect"]["cuda"] == "12.6");  // from the io.imgtool.cuda label
  CHECK(j["probe"]["environment"]["env"]["NVIDIA_REQUIRE_CUDA"].get<std::string>().find("cuda>=12.6") == 0);
  CHECK(reasons(j).find("no --gpus") != std::string::npos);
  CHECK(j["probe"]["shm"]["status"] == "warn");  // Docker's default 64 MB
}

TEST_CASE("gpu image with --gpus all on a host without the NVIDIA runtime: diagnosis with the fix") {
  std::string img = labelled("imgtool-test/smoke-gpu:nopaddle", base_image(), "gpu");
  json j = smoke({img, "--gpus", "all"}, 1);
  REQUIRE(j.contains("host_diagnosis"));
  CHECK(j["host_diagnosis"]["code"] == "nvidia_runtime_missing");
  CHECK(j["host_diagnosis"]["evidence"].get<std::string>().find("could not select device driver") != std::string::npos);
  CHECK(j["host_diagnosis"]["fix"].get<std::string>().find("nvidia-ctk runtime configure") != std::string::npos);
  // and the text report says the same
  auto r = imgtool::testing::imgtool({"smoke", img, "--gpus", "all"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("NVIDIA Container Toolkit not installed") != std::string::npos);
}

TEST_CASE("CPU paddle wheel in a gpu-labelled image fails with the CPU-only diagnosis") {
  std::string img = labelled("imgtool-test/paddle-cpu-as-gpu:3.3.1", paddle_cpu_image(), "gpu");
  json j = smoke({img, "--gpus", "none", "--shm-size", "2g"}, 1);
  const json& p = j["probe"]["paddle"];
  CHECK(p["code"] == "cpu_only_paddle");
  CHECK(p["compiled_with_cuda"] == false);
  CHECK(p["version"] == "3.3.1");  // the suite's CPU wheel (tests/test_images.h)
  CHECK(reasons(j).find("CPU-only Paddle build in a gpu image") != std::string::npos);
  CHECK(reasons(j).find("no --gpus") != std::string::npos);
}

TEST_CASE("CPU paddle wheel in a cpu-labelled image passes; shm only warns") {
  std::string img = labelled("imgtool-test/paddle-cpu-variant:3.3.1", paddle_cpu_image(), "cpu");
  json j = smoke({img, "--shm-size", "2g"}, 0);
  const json& p = j["probe"]["paddle"];
  CHECK(p["status"] == "ok");
  CHECK(p["run_check"]["works_on"] == "cpu");
  CHECK(p["run_check"]["output"].get<std::string>().find("PaddlePaddle works well on 1 CPU") != std::string::npos);
  CHECK(p["matmul"]["device"] == "cpu");
  CHECK(j["probe"]["environment"]["paddle_python"].get<std::string>().find("/opt/venv") == 0);
  CHECK(j["probe"]["shm"]["status"] == "ok");
  CHECK(j["verdict"]["warnings"].empty());
  json small = smoke({img}, 0);  // Docker's default /dev/shm: still a pass, with a warning
  CHECK(small["verdict"]["warnings"].dump().find("--shm-size") != std::string::npos);
}

namespace {
bool has_seq(const json& argv, const std::string& a, const std::string& b) {
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == a && argv[i + 1] == b) return true;
  return false;
}
}  // namespace

TEST_CASE(
    "the probe passes inside the fence, with a run profile's user and ulimits; the profile's ipc: host is left out") {
  std::string img = labelled("imgtool-test/paddle-cpu-variant:3.2.0", paddle_cpu_image(), "cpu");
  // memlock at 8 MiB, not the base profile's unlimited: this host's dockerd may not raise its own
  // hard limit (runc: "error setting rlimit type 8: operation not permitted", fence or not).
  json j =
      smoke({img, "--profile", "base", "--set", "gpus=0", "--set", "ulimit.memlock=8388608", "--set", "ipc=host"}, 0);
  const json& argv = j["docker"]["argv"];
  INFO(argv.dump());
  for (auto fv : std::vector<std::pair<const char*, const char*>>{{"--network", "none"},
                                                                  {"--cap-drop", "ALL"},
                                                                  {"--security-opt", "no-new-privileges"},
                                                                  {"--pids-limit", "4096"},
                                                                  {"--log-driver", "none"},
                                                                  {"--user", "1000:1000"},
                                                                  {"--ulimit", "memlock=8388608"}})
    CHECK_MESSAGE(has_seq(argv, fv.first, fv.second), fv.first);
  CHECK_FALSE(has_seq(argv, "--ipc", "host"));
  CHECK(j["probe"]["paddle"]["run_check"]["works_on"] == "cpu");
  CHECK(j["verdict"]["warnings"].dump().find("'--ipc host' not applied") != std::string::npos);
}
