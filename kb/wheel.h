// What a Paddle wheel says about itself, read from the artefact: the facts `imgtool kb derive`
// turns into knowledge-base rows (kb/derive.h).
//
// Read in ONE pass of the zip (libarchive; the wheel is never unpacked to disk):
//   *.dist-info/METADATA   Name, Version, Requires-Python, every Requires-Dist
//   *.dist-info/WHEEL      Tag: lines (cp311-cp311-manylinux1_x86_64)
//   paddle/version/__init__.py   every `name = '…'` string and the compiled_cuda_archs list
//   every shared library under paddle/   the GPU code compiled into it (scan/gpu_code.h), streamed
// and the wheel file's sha256 (the source every derived row cites).
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scan/gpu_code.h"

namespace imgtool::kb {

struct WheelFacts {
  std::string file;    // the wheel's file name
  std::string sha256;  // "sha256:<hex>" of the whole file
  int64_t size = 0;
  std::string name, version;                        // METADATA Name / Version ("paddlepaddle-gpu", "2.6.2")
  std::string requires_python;                      // METADATA Requires-Python (may be empty)
  std::vector<std::string> requires_dist;           // every Requires-Dist line as written
  std::vector<std::string> python_classifiers;      // "3.9" … from "Programming Language :: Python :: 3.9"
  std::vector<std::string> tags;                    // WHEEL Tag: lines
  std::map<std::string, std::string> version_vars;  // paddle/version/__init__.py: name -> '…' value
  std::optional<std::vector<std::string>> compiled_cuda_archs;  // its list (3.3+), as written
  std::map<std::string, GpuCode> gpu_code;  // path in the wheel -> GPU code (libraries holding some)
  bool has_version_file = false;
};

// Reads a wheel. InputError (one line naming the file) when it is no zip or holds no
// *.dist-info/METADATA.
WheelFacts read_wheel(const std::filesystem::path& wheel);

// `compiled_cuda_archs = [80, 86, '90']` -> {"80", "86", "90"}; nullopt when the variable is absent.
std::optional<std::vector<std::string>> py_list_var(const std::string& text, const std::string& name);

}  // namespace imgtool::kb
