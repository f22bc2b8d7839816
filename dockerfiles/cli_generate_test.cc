// `imgtool generate` through the built binary, on the shipped matrix files:
// every generated Dockerfile of the full default matrix passes BuildKit's
// parser; bad input exits 2 with one line and writes nothing.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "dockerfiles/test_util.h"
#include "tests/fixtures.h"

using namespace imgtool;
namespace fx = imgtool::testing;
namespace fs = std::filesystem;
using imgtool::dockerfiles::testing::snapshot;

namespace {

std::string matrix_file(const std::string& name) { return imgtool::testing::source_dir() + "/matrix/" + name; }

size_t count_dockerfiles(const fs::path& dir) {
  size_t n = 0;
  for (auto& e : fs::recursive_directory_iterator(dir)) n += e.path().filename() == "Dockerfile";
  return n;
}

}  // namespace

TEST_CASE("imgtool generate: the full default matrix, every Dockerfile parsed by BuildKit") {
  imgtool::testing::ScratchDir d("cli-gen");
  auto r = fx::imgtool({"generate", matrix_file("paddle.yaml"), "--out", (d.path / "out").string(), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  size_t n = j.at("cells").size();
  CHECK(n >= 8);  // the published 2.6 / 3.x GPU and CPU sets
  CHECK(count_dockerfiles(d.path / "out") == n);
  for (auto& c : j.at("cells")) {
    auto cell_json = nlohmann::json::parse(read_file(fs::path(c.at("dir").get<std::string>()) / "cell.json"));
    CHECK(cell_json.at("inputs_hash") == c.at("inputs_hash"));
    CHECK(cell_json.at("kb_version") == j.at("kb_version"));
  }
  // A Dockerfile that claims TensorRT (label io.imgtool.tensorrt) pip-installs it (the nvidia/cuda
  // bases ship none), pinned as the KB says; the 2.6 images on Ubuntu 20.04 use a Python focal packages.
  size_t with_trt = 0;
  for (auto& c : j.at("cells")) {
    fs::path dir = c.at("dir").get<std::string>();
    std::string df = read_file(dir / "Dockerfile");
    INFO(dir.string());
    bool claims = df.find("io.imgtool.tensorrt=") != std::string::npos;
    bool installs = df.find("/opt/venv/bin/pip install --no-cache-dir --index-url") != std::string::npos &&
                    (df.find("\"tensorrt") != std::string::npos || df.find("\"nvidia-tensorrt==") != std::string::npos);
    CHECK(claims == installs);
    with_trt += claims;
    if (dir.filename() == "3.0.0-gpu-cuda12.6-cudnn9.5-trt10.5")
      CHECK(df.find("--index-url \"https://pypi.nvidia.com\" \"tensorrt-cu12==10.5.0\"\n") !=
            std::string::npos);  // the matrix's tensorrt_index: PyPI has only the wheel stub
    if (dir.filename() == "2.6.2-gpu-cuda11.2-cudnn8.2-trt8.0") {
      CHECK(df.find("--index-url \"https://pypi.ngc.nvidia.com\" \"nvidia-tensorrt==8.0.3.4\"\n") != std::string::npos);
      CHECK(df.find("    fi && \\\n    python3.8 -m venv /opt/venv\n") != std::string::npos);
      // nvidia/cuda's 11.2 cudnn image ships 8.1.1: the runtime image and cuDNN 8.2.1 from NVIDIA's repository.
      CHECK(df.find("FROM nvidia/cuda:11.2.2-runtime-ubuntu20.04 AS build\n") != std::string::npos);
      CHECK(df.find("apt-get install -y --no-install-recommends libcudnn8=8.2.1.32-1+cuda11.3") != std::string::npos);
      CHECK(df.find("for pair in libcublas.so=libcublas.so.11 ") != std::string::npos);
    }
    if (dir.filename() == "3.3.1-gpu-cuda13.0-cudnn9.13") {  // the wheel brings CUDA: the OS base, the NVIDIA env
      CHECK(df.find("FROM ubuntu:22.04 AS build\n") != std::string::npos);
      CHECK(df.find("NVIDIA_DRIVER_CAPABILITIES=compute,utility") != std::string::npos);
      CHECK(df.find("NVIDIA_REQUIRE_CUDA=\"cuda>=13.0 driver>=580.65.06\"") != std::string::npos);
      CHECK(df.find("libcudnn") == std::string::npos);
    }
  }
  CHECK(with_trt == 4);  // 2.6.2 cuda11.2/11.7/12.0, 3.0.0 cuda12.6 (cuda11.8's TensorRT 8.6 wheel is a CUDA 12 build)

  auto p =
      run({"python3", imgtool::testing::source_dir() + "/dockerfiles/check_dockerfiles.py", (d.path / "out").string()});
  INFO(p.out, p.err);
  CHECK(p.exit_code == 0);
  CHECK(p.out.find("ok " + std::to_string(n)) != std::string::npos);

  auto again = fx::imgtool({"generate", matrix_file("paddle.yaml"), "--out", (d.path / "again").string()});
  REQUIRE(again.exit_code == 0);
  CHECK(again.out.find("generated " + std::to_string(n) + " folders") == 0);
  CHECK(snapshot(d.path / "out") == snapshot(d.path / "again"));
}

TEST_CASE("imgtool generate: the offline local matrix copies the wheelhouse into the context") {
  imgtool::testing::ScratchDir d("cli-gen-local");
  write_file_atomic(d.path / "wh/paddlepaddle-3.3.1-cp311-cp311-manylinux1_x86_64.whl", "wheel");
  RunOptions o;
  o.env = {{"IMGTOOL_WHEELHOUSE", (d.path / "wh").string()}};
  auto r = fx::imgtool({"generate", matrix_file("local.yaml"), "--out", (d.path / "out").string()}, o);
  INFO(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("1 context files (1 hard-linked)") != std::string::npos);
  CHECK(count_dockerfiles(d.path / "out") == 1);
}

TEST_CASE("imgtool generate: bad input exits 2 with one line and writes nothing") {
  imgtool::testing::ScratchDir d("cli-gen-bad");
  write_file_atomic(d.path / "bad.yaml", "axes:\n  paddle: [\"3.1.0\"\n");
  auto r = fx::imgtool({"generate", (d.path / "bad.yaml").string(), "--out", (d.path / "out").string()});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("imgtool: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(d.path / "out"));

  write_file_atomic(d.path / "mine/keep.txt", "x");
  r = fx::imgtool({"generate", matrix_file("paddle.yaml"), "--out", (d.path / "mine").string()});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("was not made by imgtool generate") != std::string::npos);
  CHECK(snapshot(d.path / "mine").size() == 1);

  r = fx::imgtool({"generate", matrix_file("paddle.yaml")});  // --out is required
  CHECK(r.exit_code == 2);
}
