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

using namespace imgtool;
using namespace imgtool::testing;
using nlohmann::json;

namespace {

// Builds `tag` from `dockerfile` with `context` unless an image with the same recipe exists.
std::string ensure_image(const std::string& tag, const std::string& dockerfile, const std::string& context) {
  std::string key = sha256_hex(dockerfile).substr(0, 16);
  auto have = run({"docker", "image", "inspect", "-f", "{{ index .Config.Labels \"imgtool.test.key\" }}", tag});
  if (have.ok() && have.out.substr(0, 16) == key) return tag;
  auto r = run({"docker", "build", "-q", "-t", tag, "--label", "imgtool.test.key=" + key, "-f", "-", context},
               {.stdin_data = dockerfile, .timeout = std::chrono::seconds(1200)});
  if (!r.ok()) throw Error("docker build " + tag + " failed: " + r.err + r.out);
  return tag;
}

std::string labelled(const std::string& tag, const std::string& from, const std::string& variant) {
  ScratchDir ctx("smoke-ctx");
  std::string df = "FROM " + from + "\nLABEL io.imgtool.variant=" + variant + " io.imgtool.tag=" + tag + "\n";
  if (variant == "gpu")
    df += "LABEL io.imgtool.cuda=12.6\nENV NVIDIA_REQUIRE_CUDA=\"cuda>=12.6 brand=tesla,driver>=470,driver<471\"\n";
  return ensure_image(tag, df, ctx.path.string());
}

// The build context: the wheelhouse's wheels (hard links) plus the host's libgomp.so.1,
// which the paddlepaddle wheel needs and the debootstrap minbase lacks (host and base are
// both Debian 12, so the copy matches; no network needed).
std::string paddle_context() {
  fs::path wh = wheelhouse();
  fs::path ctx = fs::path(env_or("IMGTOOL_CACHE", env_or("HOME", "/tmp") + "/.cache/imgtool")) / "test-contexts" /
                 "paddle-cpu" / wh.filename();
  fs::create_directories(ctx);
  for (auto& e : fs::directory_iterator(wh)) {
    if (e.path().extension() != ".whl" || fs::exists(ctx / e.path().filename())) continue;
    std::error_code ec;
    fs::create_hard_link(e.path(), ctx / e.path().filename(), ec);
    if (ec) fs::copy_file(e.path(), ctx / e.path().filename());
  }
  fs::copy_file("/usr/lib/x86_64-linux-gnu/libgomp.so.1", ctx / "libgomp.so.1", fs::copy_options::overwrite_existing);
  return ctx.string();
}

std::string paddle_cpu_image() {
  static std::string tag = [] {
    return ensure_image("imgtool-test/paddle-cpu:3.2.0",
                        "FROM " + base_image() +
                            "\nCOPY libgomp.so.1 /usr/lib/x86_64-linux-gnu/libgomp.so.1\n"
                            "COPY *.whl /wheels/\n"
                            "RUN python3 -m venv /opt/venv && /opt/venv/bin/pip install -q --no-index "
                            "--find-links /wheels paddlepaddle && rm -rf /wheels\n"
                            "ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n",
                        paddle_context());
  }();
  return tag;
}

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
  json j = smoke({img}, 1);
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
  CHECK(j["host_diagnosis"]["evidence"].get<std::string>().find("could not select device driver") !=
        std::string::npos);
  CHECK(j["host_diagnosis"]["fix"].get<std::string>().find("nvidia-ctk runtime configure") != std::string::npos);
  // and the text report says the same
  auto r = imgtool::testing::imgtool({"smoke", img, "--gpus", "all"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("NVIDIA Container Toolkit not installed") != std::string::npos);
}

TEST_CASE("CPU paddle wheel in a gpu-labelled image fails with the CPU-only diagnosis") {
  std::string img = labelled("imgtool-test/paddle-cpu-as-gpu:3.2.0", paddle_cpu_image(), "gpu");
  json j = smoke({img, "--shm-size", "2g"}, 1);
  const json& p = j["probe"]["paddle"];
  CHECK(p["code"] == "cpu_only_paddle");
  CHECK(p["compiled_with_cuda"] == false);
  CHECK(p["version"] == "3.2.0");
  CHECK(reasons(j).find("CPU-only Paddle build in a gpu image") != std::string::npos);
  CHECK(reasons(j).find("no --gpus") != std::string::npos);
}

TEST_CASE("CPU paddle wheel in a cpu-labelled image passes; shm only warns") {
  std::string img = labelled("imgtool-test/paddle-cpu-variant:3.2.0", paddle_cpu_image(), "cpu");
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
