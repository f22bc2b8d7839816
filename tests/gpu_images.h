// The real GPU cell (matrix/local-gpu.yaml: PyPI paddlepaddle-gpu 2.6.2 on the local CUDA 11.8
// base made from NVIDIA's PyPI wheels) for integration tests: built once by `imgtool build` and
// reused (incremental by inputs hash, state under ~/.cache/imgtool/test-gpu-state), and the test
// Docker engine with the nvidia-container-runtime-hook double (tests/gpu_engine/engine.sh).
#pragma once
#include <fcntl.h>
#include <sys/file.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "matrix/kb.h"
#include "tests/fixtures.h"

namespace imgtool::testing {

inline std::string cache_root() { return env_or("IMGTOOL_CACHE", env_or("HOME", "/tmp") + "/.cache/imgtool"); }

inline std::string last_line(std::string out) {
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
}

// Wheelhouse of the GPU cell: Paddle 2.6 predates NumPy 2 and protobuf 4 (matrix/local-gpu.yaml).
inline std::string gpu_wheelhouse() {
  auto r = run({source_dir() + "/scripts/wheelhouse.sh", "3.11", "paddlepaddle-gpu==2.6.2", "numpy==1.26.4",
                "protobuf==3.20.3"});
  if (!r.ok()) throw Error("wheelhouse.sh (gpu) failed: " + r.err);
  return last_line(r.out);
}

// The complete CUDA base of `cuda` made from NVIDIA's PyPI wheels (scripts/make-cuda-base.sh; cached by
// its inputs): imgtool-base/cuda:<cuda>-cudnn<major>-runtime-bookworm (the KB names it).
inline std::string cuda_base(const std::string& cuda = "11.8") {
  base_image();
  auto r = run({source_dir() + "/scripts/make-cuda-base.sh", cuda}, {.timeout = std::chrono::seconds(2400)});
  if (!r.ok()) throw Error("make-cuda-base.sh " + cuda + " failed: " + r.err);
  return matrix::KnowledgeBase::load_default().cuda_wheels(cuda)->image();
}

inline std::map<std::string, std::string> gpu_matrix_env() {
  return {{"IMGTOOL_CUDA_BASE", cuda_base()}, {"IMGTOOL_GPU_WHEELHOUSE", gpu_wheelhouse()}};
}

// The GPU cell's image on the host engine, built by `imgtool build` (nothing rebuilt when unchanged).
inline std::string gpu_cell_image() {
  static std::string ref = [] {
    auto env = gpu_matrix_env();
    std::string state = cache_root() + "/test-gpu-state";
    // One test process builds it at a time: the others wait here, then find it up to date (imgtool
    // refuses a second run on a state folder rather than wait: two tests starting together failed).
    int fd = ::open((state + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) throw Error("cannot lock " + state + ".lock");
    auto r = imgtool({"build", source_dir() + "/matrix/local-gpu.yaml", "--state", state},
                     {.timeout = std::chrono::seconds(3000), .env = env});
    ::close(fd);
    if (!r.ok()) throw Error("imgtool build matrix/local-gpu.yaml failed: " + r.out + r.err);
    return std::string("paddle-local:2.6.2-gpu-cuda11.8-cudnn8.6");
  }();
  return ref;
}

// `imgtool verify docker-daemon:IMAGE` as a user runs it on an image no registry holds (no
// signature, no smoke, no SBOM), its JSON report with "exit_code" added.
// `env` is added to imgtool's environment (e.g. an IMGTOOL_CACHE of the test's own).
inline nlohmann::json verify_daemon(const std::string& image, std::chrono::seconds timeout = std::chrono::seconds(1800),
                                    std::map<std::string, std::string> env = {}) {
  auto r = imgtool({"verify", "docker-daemon:" + image, "--no-signature", "--no-smoke", "--no-sbom", "--json"},
                   {.timeout = timeout, .env = std::move(env)});
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (!j.is_object())
    throw Error("imgtool verify docker-daemon:" + image + " printed no JSON report: " + r.out + r.err);
  j["exit_code"] = r.exit_code;
  return j;
}

// The test engine: one per machine (its data root is cached so images loaded once stay),
// serialised across test processes with a lock file.
struct GpuEngine {
  std::string dir = cache_root() + "/gpu-engine";
  std::string host;  // unix://…/docker.sock
  int lock_fd = -1;

  GpuEngine() {
    fs::create_directories(cache_root());
    lock_fd = ::open((cache_root() + "/gpu-engine.lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX) != 0) throw Error("cannot lock " + cache_root() + "/gpu-engine.lock");
    auto r = run({source_dir() + "/tests/gpu_engine/engine.sh", "start", dir}, {.timeout = std::chrono::seconds(120)});
    if (!r.ok()) throw Error("tests/gpu_engine/engine.sh start failed: " + r.err);
    host = last_line(r.out);
    set_driver("550.54.14", "12.4");
  }
  ~GpuEngine() {
    run({source_dir() + "/tests/gpu_engine/engine.sh", "stop", dir}, {.timeout = std::chrono::seconds(120)});
    if (lock_fd >= 0) ::close(lock_fd);
  }
  // The driver the hook double (and so the container) sees; read on every container start.
  void set_driver(const std::string& version, const std::string& cuda) const {
    std::ofstream(dir + "/bin/fake-driver.json") << R"({"driver_version": ")" << version << R"(", "driver_cuda": ")"
                                                 << cuda << R"(", "libcuda": ")" << dir << "/libcuda.so.1\"}\n";
  }
  RunOptions opts(std::chrono::seconds t = std::chrono::seconds(1200)) const {
    return {.timeout = t, .env = {{"DOCKER_HOST", host}}};
  }
  // Copies a host image into the engine unless it already holds the same image ID.
  std::string load(const std::string& image) const {
    auto id = run({"docker", "image", "inspect", "-f", "{{.Id}}", image});
    if (!id.ok()) throw Error("no image " + image + " on the host engine");
    auto have = run({"docker", "image", "inspect", "-f", "{{.Id}}", image}, opts(std::chrono::seconds(60)));
    if (have.ok() && have.out == id.out) return image;
    auto r = run({"bash", "-c", "docker save \"$1\" | DOCKER_HOST=\"$2\" docker load -q", "load", image, host},
                 {.timeout = std::chrono::seconds(1800)});
    if (!r.ok()) throw Error("docker save | docker load of " + image + " into the test engine failed: " + r.err);
    return image;
  }
};

}  // namespace imgtool::testing
