// The `imgtool matrix` front end: output and exit codes through the real binary.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/fixtures.h"
#include "tests/test_dirs.h"

namespace {
imgtool::RunResult cli(std::vector<std::string> args) { return imgtool::testing::imgtool(std::move(args)); }
}  // namespace

namespace {
const std::string kPaddle = imgtool::testing::source_dir() + "/matrix/paddle.yaml";
}

TEST_CASE("imgtool matrix: table, json, explain, host") {
  auto r = cli({"matrix", kPaddle, "--today", "2026-11-22"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("3.0.0-gpu-cuda12.6-cudnn9.5-trt10.5") != std::string::npos);
  CHECK(r.out.find("[paddle-cuda] paddle 2.6.2 × cuda 12.6: Paddle 2.6.2 GPU wheels exist for CUDA 11.2, 11.6, 11.7, "
                   "11.8, 12.0") != std::string::npos);
  CHECK(r.out.find("[paddle-trt-install] paddle 2.6.2 × cuda 11.6: Paddle 2.6 for CUDA 11.6 is built with TensorRT "
                   "8.4.0.6, but the KB has no pip install spec") != std::string::npos);
  auto j = cli({"matrix", kPaddle, "--json"});
  CHECK(j.exit_code == 0);
  CHECK(nlohmann::json::parse(j.out)["kept"].size() == 19);
  auto e = cli({"matrix", kPaddle, "--explain", "paddle=2.6.2,cuda=12.6"});
  CHECK(e.exit_code == 0);
  CHECK(e.out.find("SKIPPED by rule paddle-cuda") != std::string::npos);
  // No GPU cell of the default matrix has recorded GPU code yet: none counts as running on a V100 ...
  auto strict = cli({"matrix", kPaddle, "--host-driver", "470.82.01", "--gpu", "V100"});
  CHECK(strict.exit_code == 0);
  CHECK(strict.out.find("runs here, best first (0)") != std::string::npos);
  CHECK(strict.out.find("[host-kernels] Paddle 3.3.1's CUDA 11.8 build has no recorded GPU code") != std::string::npos);
  // ... unless asked, and then each says so.
  auto h = cli({"matrix", kPaddle, "--host-driver", "470.82.01", "--gpu", "V100", "--allow-unknown-archs"});
  CHECK(h.exit_code == 0);
  CHECK(h.out.find("runs here, best first (5)") != std::string::npos);
  CHECK(h.out.find("GPU code UNKNOWN") != std::string::npos);
  CHECK(cli({"matrix", "--help"}).exit_code == 0);
}

// Issue 25: the seeds' tables name 2.5.0-gpu-cuda11.7-cudnn8 and 2.4.0-gpu-cuda11.6-cudnn8; --explain
// says what Paddle really published. Issue 26: an unknown release is said once, with the known ones.
TEST_CASE("imgtool matrix --explain: what a Paddle release really published; an unknown release said once") {
  auto e = cli({"matrix", kPaddle, "--explain", "paddle=2.5.0,cuda=11.7"});
  CHECK(e.exit_code == 0);
  CHECK(e.out.find("Paddle 2.5.0 published images (paddlepaddle/paddle): 2.5.0, 2.5.0-jupyter, "
                   "2.5.0-gpu-cuda10.2-cudnn7.6-trt7.0, "
                   "2.5.0-gpu-cuda11.2-cudnn8.2-trt8.0, 2.5.0-gpu-cuda11.7-cudnn8.4-trt8.4, "
                   "2.5.0-gpu-cuda12.0-cudnn8.9-trt8.6") != std::string::npos);
  CHECK(e.out.find("no Paddle release") == std::string::npos);
  auto e24 = cli({"matrix", kPaddle, "--explain", "paddle=2.4.0,cuda=11.6"});
  CHECK(e24.out.find("2.4.0-gpu-cuda11.6") == std::string::npos);  // never published: 2.4's CUDA 11.6 was pip only
  CHECK(e24.out.find("2.4.0-gpu-cuda11.7-cudnn8.4-trt8.4") != std::string::npos);
  auto u = cli({"matrix", kPaddle, "--explain", "paddle=9.9.9"});
  CHECK(u.exit_code == 0);
  size_t first = u.out.find("the knowledge base has no Paddle release 9.9.9 (it knows 2.4.0, ");
  REQUIRE(first != std::string::npos);
  CHECK(u.out.find("no Paddle release 9.9.9", first + 40) == std::string::npos);  // once, not once per other axis
  CHECK(u.out.find("3.3.1)") != std::string::npos);
}

TEST_CASE("imgtool matrix: bad input exits 2 with file:line:col") {
  imgtool::testing::ScratchDir d("cli-matrix");
  std::string f = (d.path / "bad.yaml").string();
  std::ofstream(f) << "axes:\n  cuda: [\"12.x\"]\n";
  auto r = cli({"matrix", f});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(f + ":2:10: expected a version like 12.6, found '12.x'") != std::string::npos);
  std::ofstream(f) << "axes: [\n";
  CHECK(cli({"matrix", f}).exit_code == 2);
  CHECK(cli({"matrix", kPaddle, "--host-driver", "470"}).exit_code == 2);
  CHECK(cli({"matrix", kPaddle, "--host-driver", "470.82.01", "--gpu", "Voodoo"}).exit_code == 2);
  CHECK(cli({"matrix", kPaddle, "--explain", "gcc=8"}).exit_code == 2);
}
