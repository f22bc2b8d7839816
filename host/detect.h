// Host detections, each one function over the HostSystem seam:
//   driver   /proc/driver/nvidia/version ("Kernel Module  550.54.15"), else nvidia-smi
//   gpus     nvidia-smi --query-gpu=name,compute_cap,memory.total (drivers before
//            ~510 lack compute_cap: then name,memory.total and the KB's cc)
//   engine   docker info --format '{{json .}}' (version, storage driver, cgroup, runtimes)
//   toolkit  nvidia-ctk --version, nvidia-container-cli --version (the hook --gpus uses): the
//            NVIDIA container toolkit's version, "not installed" when neither answers
//   gpu run  docker run --rm --name imgtool-doctor-<pid> <the engine's fence> --gpus all
//            sha256:<ID> nvidia-smi -L (only with a driver). The probe image is an image PRESENT
//            LOCALLY (`docker image inspect`), run by its image ID: doctor never pulls, so a
//            floating tag (ubuntu:22.04) means the one this host already holds, and a digest
//            (repo@sha256:…) pins it. The fence (engine/engine.h: Isolation: no network, no
//            capability, no new privileges, a pids limit) is the smoke's: nvidia-smi needs
//            only the devices and libraries the NVIDIA runtime mounts. A timed-out run's
//            container is removed (docker rm -f).
#pragma once
#include <string>
#include <vector>

#include "host/host_system.h"

namespace imgtool::host {

struct GpuInfo {
  std::string name;    // as nvidia-smi prints it, "NVIDIA H100 80GB HBM3"
  std::string cc;      // "9.0"; empty when the driver cannot say
  std::string memory;  // "81559 MiB"
};

struct EngineInfo {
  bool reachable = false;
  std::string error;  // first line of docker's stderr when unreachable
  std::string version, storage_driver, cgroup_version, default_runtime;
  std::vector<std::string> runtimes;
};

struct HostFacts {
  std::string cpu_arch;     // "amd64" | "arm64" (uname -m); "" = not read
  std::string driver;       // "550.54.15"; empty = no NVIDIA driver
  std::string driver_from;  // where it was read, or what was looked at when none
  std::vector<GpuInfo> gpus;
  std::string gpus_error;  // nvidia-smi's complaint, if any
  EngineInfo engine;
  std::string ctk_version;     // first line of nvidia-ctk --version; empty = nvidia-ctk absent
  std::string container_cli;   // first line of nvidia-container-cli --version; empty = absent
  std::string runtime_config;  // /etc/nvidia-container-runtime/config.toml; empty = none
  std::string probe_image_id;  // the probe image's ID ("sha256:…"); empty = not present locally
  bool gpu_run_tried = false, gpu_run_ok = false;
  std::string gpu_run_detail;
};

struct DetectOptions {
  std::string probe_image = "ubuntu:22.04";  // a LOCAL image for the `docker run --gpus all` check (never pulled)
  bool try_gpu_run = true;
  std::string container_name;  // "" = imgtool-doctor-<pid>
};

// The NVIDIA container toolkit's version ("1.14.6") from what nvidia-ctk / nvidia-container-cli
// printed (either may be empty), or "" when neither names one.
std::string toolkit_version(const HostFacts& f);

// The `docker run` of the GPU check: the engine's run_argv (its fence) for IMAGE_ID.
std::vector<std::string> gpu_check_argv(const std::string& image_id, const std::string& container_name);

std::string detect_driver(HostSystem& h, std::string& from);
std::vector<GpuInfo> detect_gpus(HostSystem& h, std::string& error);
EngineInfo detect_engine(HostSystem& h);
HostFacts detect(HostSystem& h, const DetectOptions& o = {});

// "x86_64" / "aarch64" (uname -m) -> "amd64" / "arm64" (the OCI platform's names); others unchanged.
std::string cpu_arch_of_machine(const std::string& machine);

}  // namespace imgtool::host
