// Which kept cells can run on a given host (driver version + GPU model), best
// first, and why the others cannot. Rules applied per GPU cell:
//   host-arch:   the GPU's compute capability must be supported by the image's
//                CUDA (arch.yaml: e.g. Volta's last CUDA is 12.9, so a CUDA 13
//                image cannot serve a V100);
//   host-driver: the driver must be >= the CUDA version's minimum under
//                minor-version compatibility (cuda.yaml: 12.x needs >= 525.60.13);
//                below the toolkit's own driver it runs via minor-version
//                compatibility only (no PTX JIT of newer code), which is noted.
// CPU cells are listed as rejected (rule host-cpu): they do not use the GPU.
#pragma once
#include <string>
#include <vector>

#include "matrix/matrix.h"

namespace imgtool::matrix {

struct HostQuery {
  std::string driver;  // "470.82.01"
  std::string gpu;     // "V100", or a device name as nvidia-smi prints it
};

struct HostFit {
  Cell cell;
  bool full_compat = false;  // driver >= the toolkit's own driver
  std::string note;          // how it runs, with sources
};

struct HostReject {
  Cell cell;
  std::string rule, reason, source;
};

struct HostResult {
  GpuSpec gpu;
  std::string driver;
  std::vector<HostFit> fits;       // best first: newest Paddle, then newest CUDA, then full compatibility
  std::vector<HostReject> rejected;
};

// Throws InputError for a malformed driver version or a GPU absent from the KB.
HostResult query_host(const Plan& plan, const KnowledgeBase& kb, const HostQuery& q);

}  // namespace imgtool::matrix
