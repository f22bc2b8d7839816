// Host detections, each one function over the HostSystem seam:
//   driver   /proc/driver/nvidia/version ("Kernel Module  550.54.15"), else nvidia-smi
//   gpus     nvidia-smi --query-gpu=name,compute_cap,memory.total (drivers before
//            ~510 lack compute_cap: then name,memory.total and the KB's cc)
//   engine   docker info --format '{{json .}}' (version, storage driver, cgroup, runtimes)
//   toolkit  nvidia-ctk --version, nvidia-container-cli --version (the hook --gpus uses)
//   gpu run  docker run --rm --gpus all IMAGE nvidia-smi -L (only with a driver)
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
  std::string driver;         // "550.54.15"; empty = no NVIDIA driver
  std::string driver_from;    // where it was read, or what was looked at when none
  std::vector<GpuInfo> gpus;
  std::string gpus_error;     // nvidia-smi's complaint, if any
  EngineInfo engine;
  std::string ctk_version;    // empty = nvidia-ctk absent
  std::string container_cli;  // empty = nvidia-container-cli absent
  bool gpu_run_tried = false, gpu_run_ok = false;
  std::string gpu_run_detail;
};

struct DetectOptions {
  std::string probe_image = "ubuntu:22.04";  // image for the `docker run --gpus all` check
  bool try_gpu_run = true;
};

std::string detect_driver(HostSystem& h, std::string& from);
std::vector<GpuInfo> detect_gpus(HostSystem& h, std::string& error);
EngineInfo detect_engine(HostSystem& h);
HostFacts detect(HostSystem& h, const DetectOptions& o = {});

}  // namespace imgtool::host
