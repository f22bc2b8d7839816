// What the smoke host offers a gpu image, as the user says it (never guessed from the host):
//   gpu          a real NVIDIA GPU: a gpu image is judged in full (driver, PTX kernels, cuBLAS,
//                Paddle on the GPU); the default.
//   none         no GPU (`--no-gpu-host`): judged up to the driver (GPU Paddle imports, the CUDA
//                libraries load); the report says the GPU part was not run.
//   test-double  the imgtool driver double (tests/gpu_engine): judged up to what the double can
//                serve (its driver and the probe's PTX kernels); cudart, cuBLAS and Paddle on the
//                GPU are reported as not judged. The probe refuses the mode when any visible device
//                is not the double, so real hardware is always judged in full.
// One table row per mode (gpu_host.cc): the probe's --gpu-host value, what `--gpus auto` means
// for a gpu image, and the note the nightly adds to its smoke cache key and report.
#pragma once
#include <string>

namespace imgtool::smoke {

enum class GpuHost { gpu, none, test_double };

struct GpuHostMode {
  GpuHost host;
  const char* name;       // --gpu-host value and the probe's --gpu-host value
  const char* auto_gpus;  // --gpus auto for a gpu image
  const char* note;       // appended to the nightly's gpus (smoke cache key, report); "" for gpu
};

const GpuHostMode& gpu_host_mode(GpuHost h);

// "gpu" | "none" | "test-double"; `no_gpu_host` (the --no-gpu-host flag) means "none".
// InputError naming the flag for an unknown mode or a contradiction.
GpuHost parse_gpu_host(const std::string& mode, bool no_gpu_host = false);

// The accepted values, for --help and error lines: "gpu, none, test-double".
std::string gpu_host_names();

// The one `--gpus auto` rule of smoke, verify and the nightly: "auto" (or "") is the host's
// auto_gpus for a gpu image ("all" on a GPU host, "none" without one) and "none" for any other
// variant; every other value is kept as given.
std::string resolve_gpus(const std::string& gpus, const std::string& variant, GpuHost host);

}  // namespace imgtool::smoke
