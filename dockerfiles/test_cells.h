// Hand-made cells for the dockerfiles tests, shaped like the matrix library's
// output for the published Paddle images (values from Paddle's install docs).
#pragma once
#include <string>

#include "matrix/cell.h"

namespace imgtool::dockerfiles::testing {

inline matrix::Cell gpu_cell() {
  matrix::Cell c;
  c.tag = "3.1.0-gpu-cuda12.6-cudnn9.5";
  c.variant = "gpu";
  c.paddle = "3.1.0";
  c.python = "3.10";
  c.os = "ubuntu22.04";
  c.cuda = "12.6";
  c.cudnn = "9.5";
  c.min_driver = "525.60.13";
  c.min_driver_full = "560.35.03";
  c.base_image = "nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04";
  c.base_digest = "sha256:" + std::string(64, 'a');
  c.pip_requirement = "paddlepaddle-gpu==3.1.0";
  c.pip_index_url = "https://www.paddlepaddle.org.cn/packages/stable/cu126/";
  c.sources = {"https://www.paddlepaddle.org.cn/install/quick"};
  return c;
}

inline matrix::Cell trt_cell() {
  matrix::Cell c = gpu_cell();
  c.tag = "3.0.0-gpu-cuda12.6-cudnn9.5-trt10.5";
  c.paddle = "3.0.0";
  c.trt = "10.5";
  c.flavor = "devel";
  c.base_image = "nvidia/cuda:12.6.3-cudnn-devel-ubuntu22.04";
  c.base_digest.clear();
  c.pip_requirement = "paddlepaddle-gpu==3.0.0";
  c.warnings = {"base nvidia/cuda:12.6.3-cudnn-devel-ubuntu22.04 is tag-only (no digest pin)"};
  return c;
}

// A cpu cell built offline from the local Debian base and a wheelhouse.
inline matrix::Cell cpu_cell(const std::string& wheelhouse, const std::string& base) {
  matrix::Cell c;
  c.tag = "3.3.1";
  c.variant = "cpu";
  c.paddle = "3.3.1";
  c.python = "3.11";
  c.os = "debian12";
  c.base_image = base;
  c.pip_requirement = "paddlepaddle==3.3.1";
  c.wheelhouse = wheelhouse;
  return c;
}

}  // namespace imgtool::dockerfiles::testing
