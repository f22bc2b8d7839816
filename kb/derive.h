// `imgtool kb derive WHEEL…`: knowledge-base rows implied by a Paddle wheel itself, each citing the
// wheel's name and sha256 as its source (a fact read off the artefact needs no other page).
//
//   version        METADATA Version; series = its major.minor
//   python         the wheel's Python tag (cp311) and Requires-Python
//   gpu build      paddle/version/__init__.py cuda_version / cudnn_version / nccl_version /
//                  tensorrt_version (a CPU wheel says 'False'); METADATA `Requires-Dist: nvidia-*`
//                  pins = the CUDA libraries pip installs with it (pip_cuda_libraries). The version
//                  file's with_pip_cuda_libraries is NOT used: CPU wheels say 'ON' too.
//   compiled_archs the GPU code in the framework's own libraries (paddle/libs/libphi*.so,
//                  paddle/base|fluid/libpaddle.so; scan/gpu_code.h), cross-checked against the
//                  version file's compiled_cuda_archs (3.3+) where both exist: a disagreement is
//                  a warning in the output, never silently resolved.
// A wheel's strings are untrusted: derive() passes every string of the rows through
// strings::printable() (control, bidi and zero-width characters escaped), and render_yaml()
// writes the data with yaml-cpp, every value double-quoted, so no string can add a key.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kb/wheel.h"
#include "matrix/kb.h"

namespace imgtool::kb {

struct DerivedRows {
  std::string wheel, sha256, source;
  std::string package, version, series, python_tag, requires_python;
  std::string python_range;  // "3.9-3.13" from the Python classifiers ("" = none)
  bool gpu = false;
  std::string cuda, cudnn, nccl, tensorrt;   // as compiled ("" for a CPU wheel)
  bool pip_cuda_libraries = false;           // METADATA requires nvidia-* packages
  std::vector<std::string> nvidia_requires;  // "nvidia-cudnn-cu12==9.5.1.17" (markers dropped)
  std::string compiled_archs;                // "sm_61,…,sm_86" from the libraries ("" = none)
  std::string version_file_archs;            // the version file's list in the same form ("" = none)
  std::map<std::string, std::string> archs_by_library;
  // The library names the framework's own libraries hold (libphi*.so, libpaddle.so): what it
  // dlopens, read off the bytes (a superset: DT_NEEDED names and messages count too).
  std::vector<std::string> dlopen_names;
  std::vector<std::string> dlopen_heads;    // "libcubla": a short name built in code (scan/dlopen_names.h)
  std::vector<std::string> embedded_names;  // names inside longer text (a literal pool without NULs)
  std::vector<std::string> warnings;
};

DerivedRows derive(const WheelFacts& w);
// The KB's load table for this build (matrix/kb/libraries.yaml paddle_loads) held against the names
// the wheel's libraries hold: each name the table says Paddle asks for that the libraries do not
// hold is a warning (the table is wrong for this build, or the wheel is not what it says).
void cross_check_loads(DerivedRows& d, const matrix::KnowledgeBase& kb);
// The rows as YAML for matrix/kb/paddle.yaml (comments say where each goes), and as JSON.
std::string render_yaml(const DerivedRows& d);
nlohmann::json to_json(const DerivedRows& d);

}  // namespace imgtool::kb
