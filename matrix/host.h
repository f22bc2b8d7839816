// Which kept cells can run on a given host (driver version + GPU model), best
// first, and why the others cannot. Rules applied per GPU cell:
//   host-arch:   the GPU's compute capability must be supported by the image's
//                CUDA (arch.yaml: e.g. Volta's last CUDA is 12.9, so a CUDA 13
//                image cannot serve a V100);
//   host-kernels: the GPU must run the code compiled into the build (compiled_archs /
//                io.imgtool.cuda-archs: a cubin of its major, or PTX the driver JITs): Paddle
//                2.6's CUDA 11.8 wheel holds sm_61..sm_86 only, so an H100 (9.0) is refused;
//   host-driver: the driver must be >= the stricter of two floors: NVIDIA's
//                minor-version floor for the CUDA version (cuda.yaml: 12.x needs
//                >= 525.60.13) and the floor Paddle documents for that build
//                (paddle.yaml min_driver: >= 550.54.14 for CUDA 12.6); the
//                verdict names the rule that decided. Below the toolkit's own
//                driver it runs via minor-version compatibility only (no PTX JIT
//                of newer code), which is noted.
// The GPU may be a family name ("A100"): when every variant it can mean has
// the same compute capability, that is all the arch rule needs.
// CPU cells are listed as rejected (rule host-cpu): they do not use the GPU.
#pragma once
#include <string>
#include <vector>

#include "matrix/matrix.h"

namespace imgtool::matrix {

struct HostQuery {
  std::string driver;  // "470.82.01"
  std::string gpu;     // "V100", or a device name as nvidia-smi prints it
  // A cell whose compiled GPU code is unknown (no compiled_archs, no io.imgtool.cuda-archs) is
  // refused (rule host-kernels): on a GPU it was not compiled for, Paddle computes garbage without
  // an error (an H100 returned zeros for x + 1 under Paddle 2.6.2). This accepts it, said in its note.
  bool allow_unknown_archs = false;
};

struct HostFit {
  Cell cell;
  bool full_compat = false;  // driver >= the toolkit's own driver
  std::string note;          // how it runs, with sources
  std::string kernels;       // why its GPU code runs on the GPU (or that it is unknown and was allowed)
};

struct HostReject {
  Cell cell;
  std::string rule, reason, source;
};

struct HostResult {
  GpuSpec gpu;           // for a family name: its first variant (same compute capability)
  std::string gpu_note;  // "A100 = any of …" when the name was a family
  std::string driver;
  std::vector<HostFit> fits;  // best first: newest Paddle, then newest CUDA, then full compatibility
  std::vector<HostReject> rejected;
};

// Throws InputError for a malformed driver version, a GPU absent from the KB, or
// a family name whose variants differ in compute capability.
HostResult query_host(const Plan& plan, const KnowledgeBase& kb, const HostQuery& q);
HostResult query_host(const std::vector<Cell>& cells, const KnowledgeBase& kb, const HostQuery& q);

// The driver floor for a GPU cell: the stricter of NVIDIA's (cell.min_driver)
// and Paddle's documented floor for that build; `rule` says which decided.
struct DriverFloorRule {
  std::string driver, rule, source;
};
DriverFloorRule driver_floor(const Cell& c, const KnowledgeBase& kb);

// Best first: newest Paddle, then newest CUDA, then full compatibility.
bool better_fit(const HostFit& a, const HostFit& b);

}  // namespace imgtool::matrix
