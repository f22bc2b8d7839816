// Issue 24: GPU images that really run. Real parts only: the CUDA bases made from NVIDIA's PyPI
// wheels (scripts/make-cuda-base.sh; cached by their inputs), the real GPU cell built on the
// complete 11.8 base (PyPI paddlepaddle-gpu 2.6.2), and a fault image built FROM that cell in
// which each failure class of verify's library and environment rows is planted at once.
// Everything is read by `imgtool verify docker-daemon:… --no-signature --no-smoke`, as a user runs it.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "matrix/kb.h"
#include "tests/gpu_images.h"

using namespace imgtool;
using namespace imgtool::testing;
using nlohmann::json;

namespace {

std::map<std::string, json> rows(const json& report) {
  std::map<std::string, json> out;
  for (const auto& c : report["checks"]) out[c["id"].get<std::string>()] = c;
  return out;
}

}  // namespace

// `make test` builds the 11.8 base and one 12.x and one 13.x base from wheels, and verifies each
// base's library set statically: every library of nvidia/cuda's -cudnn-runtime image resolves
// through the loader, at the version kb/cuda_wheels.yaml pins.
TEST_CASE("the CUDA 11.8, 12.6 and 13.0 bases from NVIDIA's wheels hold the -cudnn-runtime library set at the pins") {
  auto kb = matrix::KnowledgeBase::load_default();
  for (const std::string cuda : {"11.8", "12.6", "13.0"}) {
    std::string tag = cuda_base(cuda);
    // The compressed layers a docker-daemon: read leaves go to the shared layer cache (trimmed to its
    // limit): standin_3x_test's cells, on the 12.6 and 13.0 bases, find their base layers there.
    json report = verify_daemon(tag);
    auto r = rows(report);
    INFO(cuda << ": " << report.dump(1));
    CHECK(report["exit_code"] == 0);
    const auto& set = kb.runtime_set(cuda.substr(0, cuda.find('.')))->libs;
    for (const auto& lib : set) {
      REQUIRE_MESSAGE(r.count("base." + lib), lib);
      std::string what = lib + ": " + r["base." + lib]["found"].get<std::string>();
      CHECK_MESSAGE(r["base." + lib]["status"] == "pass", what);
    }
    size_t base_rows = 0;
    for (const auto& [id, c] : r) base_rows += id.rfind("base.", 0) == 0;
    CHECK(base_rows == set.size());
    // CUDA 13's wheels share one folder (nvidia/cu13/lib); cuDNN keeps its own.
    if (cuda == "13.0")
      CHECK(r["base.cublas"]["found"].get<std::string>().find("/nvidia/cu13/lib/libcublas.so.13") != std::string::npos);
  }
}

TEST_CASE(
    "the GPU cell on the complete base: every library Paddle loads resolves, one row each with path and version") {
  json report = verify_daemon(gpu_cell_image());
  auto r = rows(report);
  INFO(report.dump(1));
  CHECK(report["exit_code"] == 0);
  for (auto lib :
       {"cublas", "cublasLt", "cudnn", "curand", "cusolver", "cusparse", "cufft", "nvrtc", "nccl", "nvjpeg"}) {
    std::string id = std::string("loader.") + lib;
    REQUIRE_MESSAGE(r.count(id), id);
    std::string what = id + ": " + r[id]["found"].get<std::string>();
    CHECK_MESSAGE(r[id]["status"] == "pass", what);
    CHECK(r[id]["found"].get<std::string>().find("/usr/local/lib/paddle-dynload/") ==
          0);  // the dev link the template made
  }
  CHECK(r["loader.cudnn"]["found"].get<std::string>().find("(8.6.0.163, from nvidia_cudnn_cu11-8.6.0.163.dist-info") !=
        std::string::npos);
  // cuBLAS needs cuBLASLt (DT_NEEDED), found as ld.so finds it for libcublas.so.11; libcuda.so is the driver's.
  CHECK(r["loader.cublas"]["found"].get<std::string>().find("needs libcublasLt.so.11 -> ") != std::string::npos);
  CHECK(r["loader.cuda"]["status"] == "pass");
  CHECK(r["contents.cuda-archs"]["status"] == "pass");
  CHECK(r["contents.cuda-archs"]["found"].get<std::string>().rfind("sm_61,sm_70,sm_75,sm_80,sm_86 (", 0) == 0);
  CHECK(r["env.driver-capabilities"]["status"] == "pass");
  CHECK(r["env.runtime-floor"]["status"] == "pass");
}

// Each failure class of issue 24 section 2 in one image, each caught with its fix: a library Paddle
// loads that the loader cannot find, an older cuDNN found first, no compute capability, a
// requirement that admits drivers below the runtime's floor, and archs the libraries do not hold.
TEST_CASE("a fault image: each class of GPU-image failure is caught, naming the file and the fix") {
  std::string cell = gpu_cell_image();
  ScratchDir ctx("gpu-fault-image");
  write_file_atomic(
      ctx.path / "Dockerfile",
      "FROM " + cell +
          "\n"
          "USER root\n"
          "RUN rm /usr/local/lib/paddle-dynload/libcufft.so && ldconfig && mkdir -p /opt/old && "
          "cp /usr/local/cuda/lib64/libcudnn.so.8 /opt/old/libcudnn.so.8.2.1 && "
          "ln -s libcudnn.so.8.2.1 /opt/old/libcudnn.so\n"
          "ENV LD_LIBRARY_PATH=/opt/old NVIDIA_DRIVER_CAPABILITIES=utility NVIDIA_REQUIRE_CUDA=\"cuda>=10.2\"\n"
          "LABEL io.imgtool.cuda-archs=\"sm_90\"\n"
          "USER paddle\n");
  std::string fault = "imgtool-test/gpu-fault:2.6.2";
  auto b = run({"docker", "build", "-q", "-t", fault, ctx.path.string()},
               {.timeout = std::chrono::seconds(600), .env = {{"DOCKER_BUILDKIT", "0"}}});
  REQUIRE_MESSAGE(b.ok(), b.err);
  json report = verify_daemon(fault);
  auto r = rows(report);
  INFO(report.dump(1));
  CHECK(report["exit_code"] == 1);
  auto failed_with_fix = [&](const std::string& id, const std::string& found, const std::string& fix) {
    REQUIRE_MESSAGE(r.count(id), id);
    std::string got_found = id + ": " + r[id]["found"].get<std::string>(),
                got_fix = id + ": " + r[id]["fix"].get<std::string>();
    CHECK_MESSAGE(r[id]["status"] == "fail", id);
    CHECK_MESSAGE(r[id]["found"].get<std::string>().find(found) != std::string::npos, got_found);
    CHECK_MESSAGE(r[id]["fix"].get<std::string>().find(fix) != std::string::npos, got_fix);
  };
  failed_with_fix("loader.cufft", "dlopen(\"libcufft.so\") finds nothing in /opt/old:", "ln -s ");
  failed_with_fix("loader.cudnn", "/opt/old/libcudnn.so -> /opt/old/libcudnn.so.8.2.1 (8.2.1",
                  "remove the older copy /opt/old/libcudnn.so.8.2.1");
  failed_with_fix("env.driver-capabilities", "NVIDIA_DRIVER_CAPABILITIES=utility",
                  "NVIDIA_DRIVER_CAPABILITIES=compute,utility");
  failed_with_fix("env.runtime-floor", "NVIDIA_REQUIRE_CUDA admits driver 440.33 (cuda>=10.2)", "driver>=450.80.02");
  failed_with_fix("contents.cuda-archs", "sm_61,sm_70,sm_75,sm_80,sm_86", "compiled_archs");
  run({"docker", "rmi", "-f", fault});
}
