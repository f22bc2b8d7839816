// The --gpus path on a test Docker engine (tests/gpu_engine/engine.sh): its own dockerd in its own
// network namespace, with the nvidia-container-runtime-hook double on its PATH. Everything but the
// NVIDIA container runtime and the driver is real: the engine, the GPU cell's image (PyPI
// paddlepaddle-gpu 2.6.2 on the CUDA 11.8 base from NVIDIA's PyPI wheels), its libraries, Paddle.
#include <doctest/doctest.h>

#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/fs.h"
#include "host/detect.h"
#include "tests/gpu_images.h"
#include "tests/test_images.h"

using imgtool::run;
using imgtool::RunOptions;
using namespace imgtool::testing;
using nlohmann::json;

namespace {

const char* kFakeName = "imgtool fake GPU (test double, not hardware)";

// An image in the test engine made of `rootfs` alone (tar | docker import): links stay links.
void import_rootfs(const GpuEngine& e, const fs::path& rootfs, const std::string& name) {
  auto r = run({"bash", "-c", "tar -C \"$1\" -c . | docker import - \"$2\"", "import", rootfs.string(), name},
               e.opts(std::chrono::seconds(120)));
  REQUIRE_MESSAGE(r.ok(), r.err);
}

std::string docker0() { return run({"ip", "-o", "link", "show", "docker0"}).out; }

json smoke_json(const GpuEngine& e, const std::string& image, const std::string& records) {
  auto r = imgtool::testing::imgtool({"smoke", image, "--gpus", "all", "--json", "--reps", "2", "--records", records},
                                     e.opts());
  INFO(r.err);
  auto j = json::parse(r.out, nullptr, false);
  REQUIRE_MESSAGE(j.is_object(), std::string(r.out + r.err));
  return j;
}

}  // namespace

TEST_CASE("test engine: own network namespace; the host's docker0 and bridged containers are untouched") {
  std::string before = docker0();
  REQUIRE_MESSAGE(!before.empty(), "the host engine has no docker0 bridge to protect");
  {
    GpuEngine e;
    auto info = run({"docker", "info", "--format", "{{.DockerRootDir}}"}, e.opts(std::chrono::seconds(60)));
    REQUIRE(info.ok());
    CHECK(info.out.find(e.dir) == 0);
  }  // engine stopped here
  CHECK(!docker0().empty());
  auto bridged = run({"docker", "run", "--rm", "--network", "bridge", base_image(), "python3", "-c",
                      "import socket; print(socket.gethostname())"},
                     {.timeout = std::chrono::seconds(120)});
  CHECK_MESSAGE(bridged.ok(), bridged.err);
}

TEST_CASE("smoke --gpus all of the real GPU cell runs every GPU section up to the driver double") {
  std::string img = gpu_cell_image();
  GpuEngine e;
  e.load(img);
  ScratchDir tmp("gpu-engine-smoke");
  json j = smoke_json(e, img, (tmp.path / "records.db").string());
  const json& p = j["probe"];
  // The hook double made the driver visible: its named device, not hardware.
  CHECK(p["driver"]["status"] == "ok");
  CHECK(p["driver"]["name"] == kFakeName);
  CHECK(p["driver"]["driver_cuda"] == "12.4");
  // The image's own CUDA libraries, found by the image's loader.
  CHECK(p["libraries"]["cudart"]["soname"] == "libcudart.so.11.0");
  CHECK(p["libraries"]["cudart"]["path"].get<std::string>().find("/usr/local/cuda-11.8/") == 0);
  CHECK(p["libraries"]["cublas"]["version"].get<std::string>().rfind("11.11", 0) == 0);
  CHECK(p["libraries"]["cudnn"]["version"].get<std::string>().rfind("8.6", 0) == 0);
  // The image's real cudart reaches the double and stops there: it implements only the calls the probe makes.
  CHECK(p["compat"]["reason"].get<std::string>().find("cudaGetDeviceCount failed with error 36") != std::string::npos);
  // The double runs the probe's PTX kernels on the host CPU (smoke/probe/testdata/fake_libcuda.c):
  // the kernels section runs end to end, its bandwidth is the host's, filed under the double's name.
  CHECK(p["kernels"]["status"] == "ok");
  CHECK(p["kernels"]["saxpy"]["ok"] == true);
  CHECK(p["kernels"]["bandwidth"]["copy_GBps"].get<double>() > 0);
  // cuBLAS goes through the image's real cudart, which the double cannot serve.
  CHECK(p["blas"]["status"] == "fail");
  // Paddle is the CUDA 11.8 build.
  CHECK(p["paddle"]["compiled_with_cuda"] == true);
  CHECK(p["paddle"]["cuda"] == "11.8");
  CHECK(j["verdict"]["status"] == "fail");
  // Records: the GPU series under the double's device name (no KB peak: no floor), the CPU
  // baseline under the CPU; nothing is filed under a hardware GPU name.
  bool cpu_series = false, fake_gpu_series = false;
  for (auto& t : j["throughput"]) {
    CHECK(t["gpu"].get<std::string>().find("NVIDIA") == std::string::npos);
    cpu_series |= t["metric"] == "cpu_matmul_fp32" && t["value"].get<double>() > 0;
    if (t["metric"] == "bandwidth_copy") {
      fake_gpu_series = t["gpu"] == kFakeName && t["value"].get<double>() > 0;
      CHECK(t["floor"].is_null());
    }
  }
  CHECK(cpu_series);
  CHECK(fake_gpu_series);
}

TEST_CASE("a host driver below the image's floor: the host-driver diagnosis and its fix") {
  std::string img = gpu_cell_image();
  GpuEngine e;
  e.load(img);
  e.set_driver("418.39", "10.1");  // below cuda>=11.8 and below the 450.80.02 compatibility floor
  ScratchDir tmp("gpu-engine-old-driver");
  json j = smoke_json(e, img, (tmp.path / "records.db").string());
  CHECK(j["verdict"]["status"] == "fail");
  REQUIRE_MESSAGE(j.contains("host_diagnosis"), j.dump());
  CHECK(j["host_diagnosis"]["code"] == "driver_too_old");
  CHECK(j["host_diagnosis"]["summary"].get<std::string>().find("cuda>=11.8") != std::string::npos);
  CHECK(j["host_diagnosis"]["fix"].get<std::string>().find("upgrade the host driver") != std::string::npos);
}

TEST_CASE("a CPU wheel in a gpu image: the CPU-only diagnosis") {
  std::string img = labelled("imgtool-test/gpu-engine-cpu-wheel:1", paddle_cpu_image(), "gpu");  // claims CUDA 12.6
  GpuEngine e;
  e.load(img);
  e.set_driver("560.35.03", "12.6");
  ScratchDir tmp("gpu-engine-cpu-wheel");
  json j = smoke_json(e, img, (tmp.path / "records.db").string());
  CHECK(j["verdict"]["status"] == "fail");
  CHECK(j["probe"]["driver"]["name"] == kFakeName);
  CHECK(j["probe"]["paddle"]["code"] == "cpu_only_paddle");
}

// The hook runs as root on the host and writes into the container's rootfs, which is the image's:
// a link planted there must not carry the write out to the host (tests/gpu_engine/
// nvidia-container-runtime-hook). Before, the double's makedirs + copyfile followed it.
TEST_CASE("the hook double never writes through a link in the image's rootfs; the host file stays untouched") {
  ScratchDir d("hook-links");
  const fs::path host = d.path / "host-lib";  // the host folder a hostile image points at
  fs::create_directories(host);
  imgtool::write_file_atomic(host / "libcuda.so.1", "host file, untouched\n");
  // Image 1: its library folder is a link to an absolute host path.
  fs::create_directories(d.path / "dir-link/usr/lib");
  fs::create_symlink(host, d.path / "dir-link/usr/lib/x86_64-linux-gnu");
  // Image 2: a real library folder whose libcuda.so.1 links to the host file.
  fs::create_directories(d.path / "file-link/usr/lib/x86_64-linux-gnu");
  fs::create_symlink(host / "libcuda.so.1", d.path / "file-link/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  GpuEngine e;
  import_rootfs(e, d.path / "dir-link", "imgtool-test/hook-dir-link:1");
  import_rootfs(e, d.path / "file-link", "imgtool-test/hook-file-link:1");
  auto host_untouched = [&] {
    CHECK(imgtool::read_file(host / "libcuda.so.1") == "host file, untouched\n");
    CHECK(std::distance(fs::directory_iterator(host), fs::directory_iterator()) == 1);  // no file made beside it
  };

  // The folder link: the container's start is refused, as nvidia-container-cli fails, and nothing is written.
  auto dir = run({"docker", "run", "--rm", "--gpus", "all", "imgtool-test/hook-dir-link:1", "/no-such-program"},
                 e.opts(std::chrono::seconds(120)));
  INFO(dir.err);
  CHECK_FALSE(dir.ok());
  CHECK(dir.err.find("component 'x86_64-linux-gnu' of the container's rootfs is a symbolic link") != std::string::npos);
  host_untouched();

  // The file link: replaced inside the container (rename), the host file left alone.
  const std::string name = "imgtool-hook-file-link-" + std::to_string(::getpid());
  auto file =
      run({"docker", "run", "--name", name, "--gpus", "all", "imgtool-test/hook-file-link:1", "/no-such-program"},
          e.opts(std::chrono::seconds(120)));
  INFO(file.err);
  CHECK(file.err.find("mount error") == std::string::npos);  // the hook passed; the missing program failed the start
  auto cp = run({"docker", "cp", name + ":/usr/lib/x86_64-linux-gnu/libcuda.so.1", (d.path / "copied").string()},
                e.opts(std::chrono::seconds(60)));
  run({"docker", "rm", "-f", name}, e.opts(std::chrono::seconds(60)));
  REQUIRE_MESSAGE(cp.ok(), cp.err);
  CHECK(fs::is_regular_file(fs::symlink_status(d.path / "copied")));
  CHECK(imgtool::read_file(d.path / "copied") == imgtool::read_file(e.dir + "/libcuda.so.1"));  // the double's library
  host_untouched();
}

namespace {

// doctor's detections on this machine, except the driver: the driver file and nvidia-smi's
// queries answer as a 550 host would (no driver can exist here); docker goes to the test engine.
struct DriverDoubleHost : imgtool::host::SystemHost {
  std::optional<std::string> read_file(const std::string& path) override {
    if (path == "/proc/driver/nvidia/version")
      return std::string("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14\n");
    return std::nullopt;
  }
  imgtool::RunResult run(const std::vector<std::string>& argv, int timeout_s) override {
    if (argv.at(0) == "nvidia-smi")
      return {0, false, "imgtool fake GPU (test double, not hardware), 9.0, 81559 MiB\n", ""};
    if (argv.at(0) != "docker") return {127, false, "", argv[0] + ": command not found"};
    return SystemHost::run(argv, timeout_s);
  }
};

struct DockerHostEnv {
  explicit DockerHostEnv(const std::string& host) { setenv("DOCKER_HOST", host.c_str(), 1); }
  ~DockerHostEnv() { unsetenv("DOCKER_HOST"); }
};

// A probe image whose nvidia-smi (the driver's tool: a double here, as the driver is) names the
// fake GPU, then lingers so the container can be inspected.
std::string doctor_probe_image() {
  return ensure_image(
      "imgtool-test/doctor-probe:1",
      "FROM " + base_image() +
          "\nRUN printf '%s\\n' '#!/bin/sh' "
          "'echo \"GPU 0: imgtool fake GPU (test double, not hardware) (UUID: GPU-imgtool-fake)\"' 'sleep 5' "
          "> /usr/local/bin/nvidia-smi && chmod 755 /usr/local/bin/nvidia-smi\n",
      ScratchDir("doctor-probe-ctx").path.string());
}

}  // namespace

TEST_CASE("doctor's docker run --gpus all: the local probe image by ID, inside the fence, through the NVIDIA hook") {
  std::string img = doctor_probe_image();
  GpuEngine e;
  e.load(img);
  DockerHostEnv env(e.host);
  DriverDoubleHost h;
  const std::string name = "imgtool-doctor-test-" + std::to_string(::getpid());
  auto detecting = std::async(std::launch::async,
                              [&] { return imgtool::host::detect(h, {.probe_image = img, .container_name = name}); });
  json c;
  for (int i = 0; i < 600 && c.is_null(); ++i) {
    auto r = run({"docker", "inspect", name}, e.opts(std::chrono::seconds(30)));
    auto j = r.ok() ? json::parse(r.out, nullptr, false) : json();
    if (j.is_array() && !j.empty())
      c = j[0];
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto f = detecting.get();
  INFO(f.gpu_run_detail);
  CHECK(f.gpu_run_tried);
  CHECK(f.gpu_run_ok);
  CHECK(f.gpu_run_detail.rfind("GPU 0: imgtool fake GPU", 0) == 0);
  auto id = run({"docker", "image", "inspect", "-f", "{{.Id}}", img}, e.opts(std::chrono::seconds(30)));
  CHECK(f.probe_image_id + "\n" == id.out);
  REQUIRE_MESSAGE(c.is_object(), "the doctor's container was never seen running");
  const json& hc = c["HostConfig"];
  INFO(hc.dump(2));
  CHECK(c["Config"]["Image"] == f.probe_image_id);  // run by its ID, not by the floating name
  CHECK(hc["NetworkMode"] == "none");
  CHECK(hc["CapDrop"] == json::array({"ALL"}));
  CHECK(hc["SecurityOpt"] == json::array({"no-new-privileges"}));
  CHECK(hc["PidsLimit"] == 4096);
  CHECK(hc["DeviceRequests"][0]["Count"] == -1);  // --gpus all, served by the hook double
  // An image the test engine lacks: not tried, and the engine holds no new image afterwards.
  auto images = [&] {  // sorted: images made in the same second list in any order
    return run({"bash", "-c", "docker images -q --no-trunc | sort"}, e.opts(std::chrono::seconds(30))).out;
  };
  auto before = images();
  auto g = imgtool::host::detect(h, {.probe_image = "imgtool-test/not-here:1", .container_name = name});
  CHECK_FALSE(g.gpu_run_tried);
  CHECK(g.gpu_run_detail.find("is not present locally (doctor never pulls)") != std::string::npos);
  CHECK(images() == before);
}
