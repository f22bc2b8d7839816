#include "smoke/gpu_host.h"

#include "core/error.h"

namespace imgtool::smoke {
namespace {

const GpuHostMode kModes[] = {
    {GpuHost::gpu, "gpu", "all", ""},
    {GpuHost::none, "none", "none", " (no GPU host)"},
    {GpuHost::test_double, "test-double", "all", " (GPU test double)"},
};

}  // namespace

const GpuHostMode& gpu_host_mode(GpuHost h) {
  for (auto& m : kModes)
    if (m.host == h) return m;
  return kModes[0];
}

std::string gpu_host_names() {
  std::string s;
  for (auto& m : kModes) s += (s.empty() ? "" : ", ") + std::string(m.name);
  return s;
}

GpuHost parse_gpu_host(const std::string& mode, bool no_gpu_host) {
  if (mode.empty()) return no_gpu_host ? GpuHost::none : GpuHost::gpu;
  for (auto& m : kModes) {
    if (mode != m.name) continue;
    if (no_gpu_host && m.host != GpuHost::none)
      throw InputError("--no-gpu-host contradicts --gpu-host " + mode + "; expected one of them");
    return m.host;
  }
  throw InputError("--gpu-host: expected one of " + gpu_host_names() + ", found '" + mode + "'");
}

std::string resolve_gpus(const std::string& gpus, const std::string& variant, GpuHost host) {
  if (!gpus.empty() && gpus != "auto") return gpus;
  return variant == "gpu" ? gpu_host_mode(host).auto_gpus : "none";
}

}  // namespace imgtool::smoke
