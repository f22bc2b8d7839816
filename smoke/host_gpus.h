// The GPUs this host's driver reports OUTSIDE any container, the side of a smoke an image cannot
// write: `nvidia-smi --query-gpu=uuid,name,driver_version --format=csv,noheader` (NVML). A smoke's
// evidence is "hardware" only when every device the probe saw inside the container is one of these,
// by UUID, on the same driver (smoke/evidence.h: host_kind).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace imgtool::smoke {

struct HostGpu {
  std::string uuid;    // "GPU-5f0c…" as NVML prints it
  std::string name;    // "NVIDIA H100 80GB HBM3"
  std::string driver;  // "580.159.04"
};

// The rows of nvidia-smi's CSV; nullopt when a line is not "uuid, name, driver" with a GPU- UUID.
std::optional<std::vector<HostGpu>> parse_host_gpus(std::string_view csv);

// Runs `nvidia_smi` (a program on PATH or a path); nullopt when it is missing, fails, times out or
// prints something else: then this host cannot vouch for any device, and no smoke here is hardware.
std::optional<std::vector<HostGpu>> query_host_gpus(const std::string& nvidia_smi = "nvidia-smi");

}  // namespace imgtool::smoke
