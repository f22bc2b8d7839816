// What a Paddle wheel says about itself, read from the artefact: the facts `imgtool kb derive`
// turns into knowledge-base rows (kb/derive.h).
//
// Read as pip reads it, by the zip's central directory (kb/zip.h: a zip whose local headers tell
// another story is refused), in ONE pass over the file; the wheel is never unpacked to disk:
//   *.dist-info/METADATA   Name, Version, Requires-Python, every Requires-Dist
//   *.dist-info/WHEEL      Tag: lines (cp311-cp311-manylinux1_x86_64)
//   paddle/version/__init__.py   every `name = '…'` string and the compiled_cuda_archs list; the
//                          versions derive reads (cuda_version, cudnn_version, nccl_version,
//                          tensorrt_version) must each be assigned once, on one line, to a plain
//                          version ('12.6', '8.9.7') or a CPU build's 'False' / 'None' / '0'
//   every shared library under paddle/   the GPU code compiled into it (scan/gpu_code.h), streamed
// and the wheel file's sha256 (the source every derived row cites). A file's path is where pip
// installs it: <dist>.data/purelib/ and <dist>.data/platlib/ count as the wheel's root.
// Refused besides (InputError, one line): two entries pip installs to one path, more than one
// *.dist-info folder, a text file over 8 MiB, more than max_inflated bytes to inflate. The
// version file is read as text, never run: an assignment made indirectly (exec, globals()) is
// not seen.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kb/zip.h"
#include "scan/dlopen_names.h"
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
  // path in the wheel -> the library names its C strings hold (scan/dlopen_names.h: what it dlopens)
  std::map<std::string, std::set<std::string>> dlopen_names;
  std::map<std::string, std::set<std::string>> dlopen_heads;    // names built in code: their 8-byte heads
  std::map<std::string, std::set<std::string>> embedded_names;  // names inside longer text
  bool has_version_file = false;
};

// The most bytes read_wheel() inflates from one wheel (the entries it reads: metadata, the
// version file, the libraries under paddle/). paddlepaddle-gpu 2.6.2 (CUDA 11.8) inflates to
// 2.8 GB, nearly all of it libraries; 8 GiB leaves room for the larger CUDA 12 builds while a
// zip bomb (10 MB of deflate holds 10 GB of zeros) is refused before it costs minutes of CPU.
// The libraries are streamed through the fat-binary scanner, whose per-container memory is
// fixed (scan/gpu_code.h says what still grows).
constexpr uint64_t kMaxWheelInflated = 8ull << 30;

struct WheelReadOptions {
  uint64_t max_inflated = kMaxWheelInflated;  // refused past it, before inflating the entry that would pass it
};

// Reads a wheel. InputError (one line naming the file) when it is no zip, is refused above or
// holds no *.dist-info/METADATA.
WheelFacts read_wheel(const std::filesystem::path& wheel, const WheelReadOptions& options = {});
// The same from bytes in memory (tests, the fuzz target); `name` stands for the file's name.
WheelFacts read_wheel_bytes(std::string_view bytes, const std::string& name, const WheelReadOptions& options = {});

// `compiled_cuda_archs = [80, 86, '90']` -> {"80", "86", "90"}; nullopt when the variable is absent.
std::optional<std::vector<std::string>> py_list_var(const std::string& text, const std::string& name);

}  // namespace imgtool::kb
