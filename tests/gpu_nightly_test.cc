// `imgtool nightly --gpu-host test-double` on the test engine (tests/gpu_engine/engine.sh): the real
// GPU cell (the image gpu_cell_image() built, copied into the engine, found up to date) is smoked
// with `--gpus all` through the nvidia-container-runtime-hook double, gated, pushed by digest to a
// real docker-registry, signed and tagged; the report charts its throughput. Only the NVIDIA
// container runtime and the driver are doubles.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "sign/keys.h"
#include "tests/gpu_images.h"
#include "tests/registry_fixture.h"
#include "tests/test_images.h"

using namespace imgtool::testing;
using imgtool::read_file;
using nlohmann::json;

namespace {

const char* kFakeName = "imgtool fake GPU (test double, not hardware)";
const char* kTag = "2.6.2-gpu-cuda11.8-cudnn8.6";

// A state folder that knows the GPU cell's last build (gpu_cell_image()'s state), so the nightly on
// the test engine finds the copied image up to date instead of rebuilding it there.
fs::path state_with_gpu_build(const fs::path& dir) {
  fs::create_directories(dir);
  fs::copy_file(fs::path(cache_root()) / "test-gpu-state" / "state.db", dir / "state.db");
  return dir;
}

}  // namespace

TEST_CASE("nightly --gpu-host test-double publishes the GPU cell, signed, and its report charts the throughput") {
  std::string img = gpu_cell_image();
  GpuEngine e;
  e.load(img);
  RegistryServer reg(RegistryServer::Mode::kHttp, "gpu-nightly");
  ScratchDir tmp("gpu-nightly");
  fs::path key = tmp.path / "keys" / "release", report = tmp.path / "report";
  imgtool::sign::write_key_pair(*imgtool::sign::generate_key(), key, "");
  auto env = gpu_matrix_env();
  env["DOCKER_HOST"] = e.host;
  auto r = imgtool::testing::imgtool({"nightly", source_dir() + "/matrix/local-gpu.yaml", "--registry", reg.host() + "/ai", "--key",
                    key.string() + ".key", "--report", report.string(), "--state",
                    state_with_gpu_build(tmp.path / "state").string(), "--gpu-host", "test-double", "--records",
                    (tmp.path / "records.db").string()},
                   {.timeout = std::chrono::seconds(2400), .env = env});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  json rep = json::parse(read_file(report / "nightly.json"));
  CHECK(rep["docker_builds"] == 0);  // the image built on the host engine, found up to date on the test engine
  CHECK(rep["gpus"].get<std::string>().find("GPU test double") != std::string::npos);
  REQUIRE(rep["cells"].size() == 1);
  const json& c = rep["cells"][0];
  CHECK(c["tag"] == kTag);
  CHECK(c["smoke"]["status"] == "pass");
  CHECK(c["publish"]["status"] == "published");
  // The smoke says what the double could not serve (its series below show the driver was reached).
  std::string smoke = c["smoke"].dump();
  CHECK(smoke.find("not judged on the GPU test double: blas") != std::string::npos);
  // Throughput: the double's kernels and the CPU baseline, never under a hardware GPU name.
  bool fake_bandwidth = false, cpu = false;
  for (auto& t : c["smoke"]["throughput"]) {
    std::string dev = t.value("gpu", ""), metric = t.value("metric", "");
    CHECK(dev.find("NVIDIA") == std::string::npos);
    fake_bandwidth |= metric == "bandwidth_copy" && dev == kFakeName;
    cpu |= metric == "cpu_matmul_fp32";
  }
  CHECK(fake_bandwidth);
  CHECK(cpu);
  // The report's chart: one drawn series per metric, the device named.
  std::string html = read_file(report / "report.html");
  CHECK(html.find("<polyline") != std::string::npos);
  CHECK(html.find("bandwidth_copy") != std::string::npos);
  CHECK(html.find(kFakeName) != std::string::npos);
  CHECK(html.find("no throughput measured") == std::string::npos);
  // What the registry holds is signed: verify it from there (static checks; the smoke ran above).
  std::string digest = c["publish"]["digest"];
  auto v = imgtool::testing::imgtool({"verify", "docker://" + reg.host() + "/ai/paddle-local:" + kTag, "--key", key.string() + ".pub",
                    "--no-smoke", "--json"},
                   {.timeout = std::chrono::seconds(900)});
  INFO("verify: " << v.out << v.err);
  CHECK(v.exit_code == 0);
  CHECK(v.out.find(digest) != std::string::npos);
}
