#include "host/doctor.h"

#include <doctest/doctest.h>

#include <set>

#include "host/recorded_host.h"
#include "tests/source_kb.h"
#include "tests/test_dirs.h"

using namespace imgtool;
using namespace imgtool::host;

namespace {
const matrix::KnowledgeBase& kb() { return imgtool::testing::source_kb(); }
RecordedHost recorded(const std::string& name) {
  return RecordedHost::load(imgtool::testing::source_dir() + "/host/testdata/" + name);
}
// The container name is fixed so the recorded `docker run` command matches.
const DetectOptions kRecorded{.container_name = "imgtool-doctor"};
DoctorReport doctor(const std::string& name) {
  auto h = recorded(name);
  return diagnose(detect(h, kRecorded), kb());
}
const DoctorRow& row(const DoctorReport& r, const std::string& check) {
  for (auto& x : r.rows)
    if (x.title == check) return x;
  FAIL("no row " << check);
  throw 0;
}
}  // namespace

TEST_CASE("detections read what the host answers") {
  auto v100 = recorded("v100-470.json");
  std::string from;
  CHECK(detect_driver(v100, from) == "470.82.01");
  CHECK(from == "/proc/driver/nvidia/version");
  std::string err;
  auto gpus = detect_gpus(v100, err);
  REQUIRE(gpus.size() == 2);  // the 470 driver has no compute_cap field: the second query answers
  CHECK(gpus[0].name == "Tesla V100-SXM2-32GB");
  CHECK(gpus[0].cc.empty());
  auto e = detect_engine(v100);
  CHECK(e.reachable);
  CHECK(e.version == "20.10.12");
  CHECK(std::find(e.runtimes.begin(), e.runtimes.end(), "nvidia") != e.runtimes.end());
  // nvidia-smi alone (no /proc file) also gives the driver.
  RecordedHost smi_only(nlohmann::json{
      {"commands", {{"nvidia-smi --query-gpu=driver_version --format=csv,noheader", {{"out", "550.90.07\n"}}}}}});
  CHECK(detect_driver(smi_only, from) == "550.90.07");
  CHECK(from == "nvidia-smi");
  // Nothing at all: no driver, and what was looked at is said.
  RecordedHost empty(nlohmann::json::object());
  CHECK(detect_driver(empty, from).empty());
  CHECK(from.find("nvidia-smi: not found") != std::string::npos);
  CHECK_FALSE(detect_engine(empty).reachable);
}

TEST_CASE("doctor: a V100 with 470.82.01 serves CUDA 11.x images only") {
  auto r = doctor("v100-470.json");
  CHECK(row(r, "NVIDIA driver").status == Status::kWarn);
  CHECK(row(r, "NVIDIA driver").found.find("serves CUDA images up to 11.8") != std::string::npos);
  CHECK(row(r, "NVIDIA driver").fix.find("525.60.13") != std::string::npos);
  CHECK(row(r, "GPUs").found.find("cc 7.0 from the KB") != std::string::npos);
  CHECK(row(r, "GPUs").found.find("Volta: CUDA 9.0 to 12.9") != std::string::npos);
  CHECK(row(r, "NVIDIA container runtime").status == Status::kPass);
  // Toolkit 1.7.0 (nvidia-container-cli only): every known container escape applies (issue 33 item 6).
  CHECK(row(r, "NVIDIA container toolkit").status == Status::kFail);
  CHECK(row(r, "docker run --gpus all").status == Status::kPass);
  CHECK(r.failed());
}

TEST_CASE("doctor: an H100 with 550 is all ok") {
  auto r = doctor("h100-550.json");
  for (auto& x : r.rows) CHECK_MESSAGE(x.status == Status::kPass, x.title << ": " << x.found);
  CHECK(row(r, "NVIDIA driver").found.find("up to 12.9") != std::string::npos);
  CHECK(row(r, "GPUs").found.find("NVIDIA H100 80GB HBM3 (cc 9.0, 81559 MiB, Hopper") != std::string::npos);
  auto j = to_json(r);
  CHECK(j["ok"] == true);
  CHECK(j["driver"] == "550.54.15");
  // The one check-row model (core/check_row.h): stable, unique ids, in the JSON as well.
  std::set<std::string> ids;
  for (auto& x : r.rows) CHECK_MESSAGE(ids.insert(x.id).second, x.id);
  CHECK(row(r, "NVIDIA driver").id == "doctor.nvidia-driver");
  CHECK(row(r, "docker run --gpus all").id == "doctor.docker-run-gpus-all");
  CHECK(j["rows"][0]["id"] == "doctor.nvidia-driver");
  CHECK(j["rows"][0]["check"] == "NVIDIA driver");
  CHECK(j["rows"][0]["status"] == "ok");  // doctor's word for pass
}

// Issue 24 section 3: `doctor --image` refuses a tag whose Paddle has no kernels for the host's GPU.
TEST_CASE("doctor --image: PyPI's Paddle 2.6.2 on the recorded H100 host has no kernel image; on the V100 it runs") {
  ImageNeeds p262{"paddle-local:2.6.2-gpu-cuda11.8-cudnn8.6", "gpu", "11.8", "450.80.02",
                  "sm_61,sm_70,sm_75,sm_80,sm_86"};
  auto h100 = doctor("h100-550.json");
  auto rows = image_rows(h100.facts, p262, kb());
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].id == "doctor.image.gpu-code");  // never the reference: ids stay stable
  CHECK(rows[1].id == "doctor.image.driver");
  CHECK(rows[0].status == Status::kFail);
  CHECK(rows[0].found.find(
            "NVIDIA H100 80GB HBM3: its GPU code is sm_61,sm_70,sm_75,sm_80,sm_86 (machine code only, no PTX") == 0);
  CHECK(rows[0].fix.find("imgtool select") != std::string::npos);
  CHECK(rows[1].status == Status::kPass);  // 550.54.15 >= 450.80.02
  auto v100 = image_rows(doctor("v100-470.json").facts, p262, kb());
  CHECK(v100[0].status == Status::kPass);
  CHECK(v100[0].found.find("runs on Tesla V100") != std::string::npos);
  auto none = image_rows(doctor("no-gpu.json").facts, p262, kb());
  CHECK(none[0].status == Status::kFail);
  CHECK(image_rows(doctor("no-gpu.json").facts, {"paddle:3.3.1", "cpu", "", "", ""}, kb())[0].status == Status::kPass);
}

// Issue 32 section 3: an amd64 image on an arm64 host (a GB200's Grace) does not start at all.
TEST_CASE("doctor --image: an image whose platform is not the host's CPU fails before any GPU row") {
  auto gb200 = doctor("h100-550.json").facts;
  gb200.cpu_arch = "arm64";  // the recorded host with an Arm CPU: uname -m = aarch64
  ImageNeeds amd64{"paddle:3.3.1-gpu", "gpu", "13.0", "580.65.06", "sm_90,sm_100", "linux/amd64"};
  auto rows = image_rows(gb200, amd64, kb());
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].id == "doctor.image.platform");
  CHECK(rows[0].status == Status::kFail);
  CHECK(rows[0].found == "linux/amd64 image on this arm64 host: it does not start (\"exec format error\")");
  CHECK(image_rows(gb200, {"paddle:3.3.1", "cpu", "", "", "", "linux/amd64"}, kb())[0].status == Status::kFail);
  CHECK(image_rows(gb200, {"paddle:3.3.1", "cpu", "", "", "", "linux/arm64"}, kb())[0].status == Status::kPass);
  gb200.cpu_arch = "amd64";
  CHECK(image_rows(gb200, amd64, kb())[0].id == "doctor.image.gpu-code");
  CHECK(cpu_arch_of_machine("aarch64") == "arm64");
  CHECK(cpu_arch_of_machine("x86_64") == "amd64");
}

TEST_CASE("doctor: no GPU is said plainly, not a failure") {
  auto r = doctor("no-gpu.json");
  CHECK(row(r, "NVIDIA driver").found.rfind("no NVIDIA driver", 0) == 0);
  CHECK(row(r, "NVIDIA driver").found.find("cpu images only") != std::string::npos);
  CHECK(row(r, "docker run --gpus all").found == "not tried: no NVIDIA driver");
  CHECK(row(r, "NVIDIA container runtime").fix.find("not needed without a GPU") != std::string::npos);
  CHECK(row(r, "cgroup").found == "v1");
  CHECK_FALSE(r.failed());
  CHECK(render_table(r).find("warn  NVIDIA driver") != std::string::npos);
}

TEST_CASE("doctor: a GPU without the container runtime fails with the fix") {
  auto r = doctor("no-runtime.json");
  CHECK(row(r, "NVIDIA container runtime").status == Status::kFail);
  CHECK(row(r, "NVIDIA container runtime").fix.find("nvidia-ctk runtime configure --runtime=docker") !=
        std::string::npos);
  CHECK(row(r, "docker run --gpus all").status == Status::kFail);
  CHECK(row(r, "docker run --gpus all").found.find("could not select device driver") != std::string::npos);
  CHECK(r.failed());
}

TEST_CASE("doctor: an engine older than --gpus fails; devicemapper warns") {
  auto r = doctor("old-engine.json");
  CHECK(row(r, "Docker engine").status == Status::kFail);
  CHECK(row(r, "Docker engine").found.find("18.09.7: older than 19.03") != std::string::npos);
  CHECK(row(r, "storage driver").status == Status::kWarn);
  CHECK(r.failed());
}

TEST_CASE("doctor on this machine (real detections) reports no NVIDIA driver cleanly") {
  SystemHost h;
  auto f = detect(h);
  if (!f.driver.empty()) return;  // a GPU machine: the recorded hosts above cover the logic
  auto r = diagnose(f, kb());
  CHECK(row(r, "NVIDIA driver").found.rfind("no NVIDIA driver", 0) == 0);
  CHECK(row(r, "Docker engine").status == Status::kPass);
  CHECK_FALSE(r.failed());
}

TEST_CASE("doctor: the NVIDIA container toolkit's version is a row; \"not installed\" without one") {
  auto h100 = doctor("h100-550.json");
  CHECK(row(h100, "NVIDIA container toolkit").status == Status::kPass);
  CHECK(row(h100, "NVIDIA container toolkit").found ==
        "1.17.8 (nvidia-ctk: NVIDIA Container Toolkit CLI version 1.17.8)");
  auto v100 = doctor("v100-470.json");
  CHECK(
      row(v100, "NVIDIA container toolkit").found.rfind(toolkit_version(v100.facts) + " (nvidia-container-cli: ", 0) ==
      0);
  auto none = doctor("no-gpu.json");
  CHECK(row(none, "NVIDIA container toolkit").found.rfind("not installed", 0) == 0);
  CHECK(row(none, "NVIDIA container toolkit").status == Status::kWarn);
  CHECK(toolkit_version(HostFacts{.ctk_version = "", .container_cli = "version: 1.0.0"}) == "1.0.0");
  CHECK(toolkit_version(HostFacts{.ctk_version = "NVIDIA Container Toolkit CLI version 1.17.8",
                                  .container_cli = "cli-version: 1.17.8"}) == "1.17.8");
}

// Issue 33 item 6: a toolkit with a known container escape fails; a patched one warns while the
// enable-cuda-compat hook (the one CVE-2025-23266 went through) runs.
TEST_CASE("doctor: NVIDIA Container Toolkit <= 1.17.7 is a known container escape (CVE-2025-23266) and fails") {
  auto toolkit = [](const std::string& version, const std::string& config = "") {
    HostFacts f{.ctk_version = "NVIDIA Container Toolkit CLI version " + version, .runtime_config = config};
    return diagnose(f, kb());
  };
  auto r = row(toolkit("1.17.7"), "NVIDIA container toolkit");
  CHECK(r.status == Status::kFail);
  CHECK(r.found.find("CVE-2025-23266 (fixed in 1.17.8)") != std::string::npos);
  CHECK(r.found.find("CVE-2024-0132") == std::string::npos);
  CHECK(r.fix.find("1.17.8 or later") != std::string::npos);
  auto old = row(toolkit("1.14.6"), "NVIDIA container toolkit");
  CHECK(old.found.find("CVE-2024-0132 (fixed in 1.16.2)") != std::string::npos);
  CHECK(old.found.find("CVE-2025-23359 (fixed in 1.17.4)") != std::string::npos);
  CHECK(row(doctor("v100-470.json"), "NVIDIA container toolkit").status == Status::kFail);  // 1.7.0
  auto hook = row(toolkit("1.17.8"), "NVIDIA container toolkit");
  CHECK(hook.status == Status::kWarn);
  CHECK(hook.fix.find("features.disable-cuda-compat-lib-hook = true") != std::string::npos);
  CHECK(row(toolkit("1.18.0", "[features]\n  disable-cuda-compat-lib-hook = true\n"), "NVIDIA container toolkit")
            .status == Status::kPass);
  CHECK(row(toolkit("1.18.0", "#disable-cuda-compat-lib-hook = true\n"), "NVIDIA container toolkit").status ==
        Status::kWarn);  // commented out
}

TEST_CASE("doctor's GPU check runs a local probe image by its ID, inside the engine's fence, never pulling") {
  auto h = recorded("h100-550.json");
  auto f = detect(h, kRecorded);
  CHECK(f.gpu_run_ok);
  const std::string id = "sha256:53a843653cbcd9e10be207e951edb6b8b5e5bcd5ec8a7e3d7d0d4c6b2bd3cc51";
  CHECK(f.probe_image_id == id);
  CHECK(f.gpu_run_detail.find("(in ubuntu:22.04, image sha256:53a843653cbc)") != std::string::npos);
  std::string argv;
  for (auto& a : gpu_check_argv(id, "imgtool-doctor")) argv += (argv.empty() ? "" : " ") + a;
  CHECK(argv.find("--network none --cap-drop ALL --security-opt no-new-privileges --pids-limit 4096") !=
        std::string::npos);
  CHECK(std::find(h.commands_run().begin(), h.commands_run().end(), argv) != h.commands_run().end());
  for (auto& c : h.commands_run()) CHECK(c.find("pull") == std::string::npos);
  // A probe image this host lacks: not tried, nothing pulled, the fix says how to make one local.
  auto bare = recorded("h100-550.json");
  auto g = detect(bare, {.probe_image = "nvidia/cuda:12.4.1-base-ubuntu22.04", .container_name = "imgtool-doctor"});
  CHECK_FALSE(g.gpu_run_tried);
  CHECK(g.probe_image_id.empty());
  for (auto& c : bare.commands_run()) CHECK(c.rfind("docker run", 0) != 0);
  auto r = diagnose(g, kb());
  CHECK(row(r, "docker run --gpus all").status == Status::kWarn);
  CHECK(row(r, "docker run --gpus all").found ==
        "not tried: the probe image nvidia/cuda:12.4.1-base-ubuntu22.04 is not present locally (doctor never pulls)");
  CHECK(row(r, "docker run --gpus all").fix.find("--probe-image") != std::string::npos);
}
