// verify_smoke without Docker: the rows a smoke result becomes, --gpus auto,
// temporary names, and the hook's flow on the fake engine (reuse by image
// ID, no run for an unsigned image, a vanished local image).
#include "verify/verify_smoke.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>

#include "engine/fake_engine.h"

using namespace imgtool;
using namespace imgtool::verify;
using nlohmann::json;

namespace {

const std::string kConfig = "sha256:" + std::string(64, 'c');

image::Manifest manifest() {
  image::Manifest m;
  m.media_type = image::media::kOciManifest;
  m.raw = json{{"schemaVersion", 2},
               {"mediaType", image::media::kOciManifest},
               {"config", {{"mediaType", image::media::kOciConfig}, {"digest", kConfig}, {"size", 2}}},
               {"layers", json::array()}}
              .dump();
  return m;
}

const CheckResult* row(const Report& r, const std::string& id) {
  for (const auto& c : r.checks)
    if (c.id == id) return &c;
  return nullptr;
}

json gpu_no_gpus_probe() {
  return {{"environment", {{"status", "ok"}, {"reason", "debian 12, glibc 2.36, python 3.11.2"}}},
          {"shm", {{"status", "warn"}, {"reason", "/dev/shm is 64.0 MiB"}, {"fix", "run with --shm-size 2g"}}},
          {"libraries", {{"status", "warn"}, {"reason", "not found: cudart, cublas, cudnn"}}},
          {"driver",
           {{"status", "skipped"},
            {"code", "no_gpus_flag"},
            {"reason", "no --gpus: libcuda.so.1 missing"},
            {"fix", "run with --gpus all"}}},
          {"kernels", {{"status", "skipped"}, {"reason", "GPU part not run: see driver (no_gpus_flag)"}}},
          {"paddle",
           {{"status", "fail"},
            {"code", "cpu_only_paddle"},
            {"reason", "CPU-only Paddle build in a gpu image: paddle.is_compiled_with_cuda() is False"},
            {"fix", "install paddlepaddle-gpu"}}},
          {"metrics", json::array()},
          {"verdict",
           {{"status", "fail"},
            {"reasons", {"paddle: CPU-only Paddle build in a gpu image", "driver: no --gpus"}},
            {"warnings", {"shm: /dev/shm is 64.0 MiB"}}}}};
}

json cpu_pass_probe() {
  return {{"environment", {{"status", "ok"}, {"reason", "debian 12"}}},
          {"shm", {{"status", "ok"}, {"reason", "/dev/shm is 2.0 GiB"}}},
          {"libraries", {{"status", "warn"}, {"reason", "not found: cudart, cublas, cudnn"}}},
          {"driver", {{"status", "skipped"}, {"reason", "cpu image"}}},
          {"paddle", {{"status", "ok"}, {"reason", "paddle 3.2.0 works on CPU"}}},
          {"metrics", json::array()},
          {"verdict", {{"status", "pass"}, {"reasons", json::array()}, {"warnings", json::array()}}}};
}

// The fake engine (engine/fake_engine.h) holding one image (by ID and by name) unless `present` is
// false; the probe's run prints `probe`.
struct FakeDocker : engine::FakeEngine {
  std::string variant = "cpu";
  bool present = true;
  json probe = cpu_pass_probe();
  // Fills the engine from the fields above (call after setting them: options() does).
  void stock() {
    if (present)
      add_image({"imgtool-test/x:cpu", "imgtool-test/x:gpu"},
                {.id = kConfig, .labels = {{"io.imgtool.variant", variant}}});
    on_run = [this](const engine::RunRequest&) { return RunResult{0, false, probe.dump(), ""}; };
  }
  bool ran(const std::string& what) const { return called(what + " "); }
  std::vector<std::string> run_argv() const {
    return runs.empty() ? std::vector<std::string>{} : engine::run_argv(runs[0]);
  }
};

VerifySmokeOptions options(FakeDocker& d) {
  d.stock();
  VerifySmokeOptions o;
  o.engine = &d;
  o.records.record = false;
  o.smoke.probe_dir = "/nonexistent-probe";
  return o;
}

}  // namespace

TEST_CASE("temporary names are valid docker names for any reference") {
  std::string d = "sha256:0123456789abcdef" + std::string(48, '0');
  std::string pid = std::to_string(::getpid());
  CHECK(temporary_name(image::parse_reference("docker://127.0.0.1:5000/ai/paddle:3.2.0"), d) ==
        "imgtool-verify/ai/paddle:0123456789ab-" + pid);
  CHECK(temporary_name(image::parse_reference("oci:/tmp/Out_Layout./:v1"), d) ==
        "imgtool-verify/out_layout:0123456789ab-" + pid);
  CHECK(temporary_name(image::parse_reference("oci:./-x-"), d) == "imgtool-verify/x:0123456789ab-" + pid);
}

TEST_CASE("rows: a section fails exactly when the verdict names it") {
  smoke::SmokeResult res;
  res.expect_variant = "gpu";
  res.argv = {"docker", "run", "--rm", "IMAGE"};
  res.probe = gpu_no_gpus_probe();
  res.verdict = "fail";
  res.reasons = {"paddle: CPU-only Paddle build in a gpu image", "driver: no --gpus"};
  Report r;
  for (auto& c : smoke_rows(res, {})) r.add(c);
  CHECK(row(r, "smoke.environment")->status == Status::kPass);
  CHECK(row(r, "smoke.shm")->status == Status::kWarn);
  CHECK(row(r, "smoke.shm")->fix == "run with --shm-size 2g");
  CHECK(row(r, "smoke.libraries")->status == Status::kWarn);
  CHECK(row(r, "smoke.driver")->status == Status::kFail);  // "skipped" in the probe, but it is why the verdict failed
  CHECK(row(r, "smoke.driver")->fix == "run with --gpus all");
  CHECK(row(r, "smoke.kernels")->status == Status::kSkip);
  CHECK(row(r, "smoke.paddle")->status == Status::kFail);
  CHECK(row(r, "smoke.paddle")->found.find("CPU-only Paddle build in a gpu image") != std::string::npos);
  CHECK(row(r, "smoke")->status == Status::kFail);
  CHECK(row(r, "smoke")->expected.find("--gpus none") != std::string::npos);
  CHECK(row(r, "smoke.blas") == nullptr);  // not in the probe document
  CHECK_FALSE(r.ok());
}

TEST_CASE("rows: a host diagnosis becomes smoke.host with its fix") {
  smoke::SmokeResult res;
  res.expect_variant = "gpu";
  res.argv = {"docker", "run", "--gpus", "all", "IMAGE"};
  res.host = smoke::HostDiagnosis{"nvidia_runtime_missing", "NVIDIA Container Toolkit not installed",
                                  "install nvidia-container-toolkit; nvidia-ctk runtime configure",
                                  "could not select device driver", false};
  res.reasons = {"host: NVIDIA Container Toolkit not installed"};
  auto rows = smoke_rows(res, {});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].id == "smoke.host");
  CHECK(rows[0].status == Status::kFail);
  CHECK(rows[0].found.find("could not select device driver") != std::string::npos);
  CHECK(rows[0].fix.find("nvidia-ctk") != std::string::npos);
  CHECK(rows[1].id == "smoke");
  CHECK(rows[1].fix.find("nvidia-ctk") != std::string::npos);
}

TEST_CASE("rows: throughput judgements become rows; a failed one fails") {
  smoke::SmokeResult res;
  res.expect_variant = "gpu";
  res.verdict = "pass";
  smoke::Judgement ok, bad;
  ok.record = {1, "d", "t", "NVIDIA H100", "550.54", "bandwidth_copy", 3000, "GB/s"};
  ok.floor = 1000;
  bad.record = {1, "d", "t", "NVIDIA H100", "550.54", "gemm_fp16", 10, "TFLOP/s"};
  bad.status = Status::kFail;
  bad.floor = 200;
  bad.notes = {"gemm_fp16 10.0 TFLOP/s is below the floor 200.0"};
  auto rows = smoke_rows(res, {ok, bad});
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].id == "smoke.throughput.bandwidth_copy");
  CHECK(rows[0].status == Status::kPass);
  CHECK(rows[0].expected == ">= floor 1000.0 GB/s");
  CHECK(rows[1].status == Status::kFail);
  CHECK(rows[1].found.find("below the floor") != std::string::npos);
  CHECK(rows[1].fix.find("imgtool history --tag t") != std::string::npos);
}

TEST_CASE("hook: a local image with the same config is smoked by ID; cpu -> no --gpus; nothing removed") {
  FakeDocker d;
  Report r;
  r.add({"signature", "signed", Status::kPass, "", "", ""});
  verify_smoke("docker://127.0.0.1:5000/ai/paddle:3.2.0", manifest(), r, options(d));
  REQUIRE(row(r, "smoke.load") != nullptr);
  CHECK(row(r, "smoke.load")->status == Status::kPass);
  CHECK(row(r, "smoke.load")->found.find("already present") != std::string::npos);
  CHECK(row(r, "smoke")->status == Status::kPass);
  CHECK(row(r, "smoke.libraries")->status == Status::kSkip);  // a cpu image needs no CUDA libraries
  auto argv = d.run_argv();
  REQUIRE_FALSE(argv.empty());
  CHECK(std::find(argv.begin(), argv.end(), "--gpus") == argv.end());
  CHECK(std::find(argv.begin(), argv.end(), kConfig) != argv.end());
  CHECK_FALSE(d.called("remove"));  // nothing loaded, nothing removed
  CHECK(r.ok());
}

TEST_CASE("hook: gpu image gets --gpus all by default, the flag value otherwise") {
  FakeDocker d;
  d.variant = "gpu";
  d.probe = gpu_no_gpus_probe();
  Report r;
  verify_smoke("docker-daemon:imgtool-test/x:gpu", manifest(), r, options(d));
  auto argv = d.run_argv();
  auto g = std::find(argv.begin(), argv.end(), "--gpus");
  REQUIRE(g != argv.end());
  CHECK(*(g + 1) == "all");
  CHECK_FALSE(r.ok());
  FakeDocker d2;
  d2.variant = "gpu";
  auto o = options(d2);
  o.smoke.gpus = "none";
  o.smoke.shm_size = "2g";
  Report r2;
  verify_smoke("docker-daemon:imgtool-test/x:gpu", manifest(), r2, o);
  argv = d2.run_argv();
  CHECK(std::find(argv.begin(), argv.end(), "--gpus") == argv.end());
  CHECK(std::find(argv.begin(), argv.end(), "2g") != argv.end());
}

TEST_CASE("hook: an image whose signature failed is not run") {
  FakeDocker d;
  Report r;
  r.add({"signature", "signed", Status::kFail, "a signature", "none", "sign it"});
  verify_smoke("docker://127.0.0.1:5000/ai/paddle:3.2.0", manifest(), r, options(d));
  CHECK(d.calls.empty());
  REQUIRE(row(r, "smoke") != nullptr);
  CHECK(row(r, "smoke")->status == Status::kSkip);
  CHECK(row(r, "smoke")->found.find("signature did not verify") != std::string::npos);
}

TEST_CASE("hook: a docker-daemon image gone from the engine fails with a load row, no run") {
  FakeDocker d;
  d.present = false;
  Report r;
  verify_smoke("docker-daemon:imgtool-test/x:cpu", manifest(), r, options(d));
  CHECK(row(r, "smoke.load")->status == Status::kFail);
  CHECK(row(r, "smoke")->status == Status::kFail);
  CHECK_FALSE(d.ran("run"));
}

TEST_CASE(
    "hook: a records store that cannot be written fails the smoke (one rule with imgtool smoke and the nightly)") {
  FakeDocker d;
  d.probe["driver"] = {{"status", "ok"}, {"name", "NVIDIA H100"}, {"driver_branch", "550"}};
  d.probe["metrics"] = json::array({{{"metric", "gemm_fp16"}, {"value", 100.0}, {"unit", "TFLOP/s"}}});
  Report r;
  r.add({"signature", "signed", Status::kPass, "", "", ""});
  auto o = options(d);
  o.records.record = true;
  o.records.records = "/proc/imgtool-no-such-dir/records.db";  // cannot be created
  o.records.peaks = [](std::string_view) { return std::optional<smoke::GpuPeaks>(); };
  verify_smoke("docker://127.0.0.1:5000/ai/paddle:3.2.0", manifest(), r, o);
  REQUIRE(row(r, "smoke") != nullptr);
  CHECK(row(r, "smoke")->status == Status::kFail);  // before: a warning, and the smoke passed
  CHECK_FALSE(r.ok());
  bool named = false;
  for (const auto& c : r.checks) named = named || c.found.find("throughput not recorded") != std::string::npos;
  CHECK(named);
}
