// What an image ACTUALLY contains, read from its merged filesystem
// (contents_tree.h): the facts the claims (labels, tag) are checked against.
//
// Where each fact comes from
//   python      lib/python3.X/os.py anywhere (/usr/lib, /usr/local/lib, conda),
//               and `version` in any pyvenv.cfg (virtual environments).
//   paddle      <site|dist>-packages/paddlepaddle*-V.dist-info; its METADATA;
//               <same dir>/paddle/version/__init__.py (cuda_version/cudnn_version
//               as compiled, 'False' for a CPU build).
//   GPU build   (the rule, strongest evidence first)
//               1. paddle/version/__init__.py: cuda_version other than
//                  'False'/'None' -> GPU, else CPU (what the binary was built with);
//               2. otherwise any of: distribution name paddlepaddle-gpu,
//                  METADATA `Requires-Dist: nvidia-*`, paddle/libs/libphi_gpu.so.
//               Note: with_pip_cuda_libraries='ON' appears in CPU wheels too;
//               it is NOT evidence.
//   CUDA libs   libcudart.so.V / libcublas.so.V / libcudnn.so.V / libnvinfer.so.V
//               files or symlinks that resolve (incl. site-packages/nvidia/*/lib),
//               and nvidia_*_cuNN-V.dist-info / tensorrt*-V.dist-info names; the
//               most specific version wins ("12.6.77" over "12").
//   cudnn.so    every unversioned libcudnn.so and whether its symlink chain resolves.
//   owners      every file a pip-installed NVIDIA (or TensorRT) distribution's RECORD lists,
//               with that distribution's version: the version of a library whose file name
//               carries only its soname (nvidia/cublas/lib/libcublas.so.12).
//   GPU code    the fat binaries of Paddle's own libraries (<site>/paddle/libs/libphi*.so*,
//               paddle/base|fluid/libpaddle.so), streamed while the layers were read
//               (examine_for_facts): the architectures the build can run on.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scan/contents_tree.h"
#include "scan/gpu_code.h"

namespace imgtool::scan {

struct PaddleDist {
  std::string name;      // "paddlepaddle" or "paddlepaddle-gpu"
  std::string version;   // dist-info version ("3.2.0", "3.0.0rc1")
  std::string python;    // "3.11" from the site-packages path ("" if unknown)
  std::string location;  // the dist-info folder
  bool gpu = false;
  std::string gpu_evidence;   // why gpu is true/false, for messages
  std::string compiled_cuda;  // from paddle/version ("" if unknown or CPU)
  std::string compiled_cudnn;
  bool pip_cuda_libraries = false;  // METADATA Requires-Dist nvidia-*: the wheel brings its CUDA libraries
  GpuCode gpu_code;                 // merged over its framework libraries
  // The library names its framework libraries hold (what it dlopens, read off the bytes).
  std::set<std::string> dlopen_names;
  std::vector<std::string> code_libraries;  // the libraries that were read for it
};

// The distribution that installed a file (its RECORD lists it).
struct FileOwner {
  std::string dist;     // the dist-info folder's name, "nvidia_cublas_cu12-12.6.4.1.dist-info"
  std::string version;  // "12.6.4.1"
};

struct LibFacts {
  std::string version;             // most specific version seen ("" if absent)
  std::vector<std::string> paths;  // where it was seen (files and dist-infos)
  bool present() const { return !paths.empty(); }
};

struct CudnnLink {
  std::string path;      // an unversioned libcudnn.so
  std::string resolved;  // "" if dangling
};

struct ContentsFacts {
  std::vector<std::string> pythons;       // "3.11", sorted, unique
  std::vector<std::string> venv_pythons;  // from pyvenv.cfg
  std::vector<PaddleDist> paddles;
  std::map<std::string, LibFacts> libs;  // "cudart", "cublas", "cudnn", "tensorrt"
  std::vector<CudnnLink> cudnn_links;
  std::map<std::string, FileOwner> owners;  // absolute path -> the pip distribution that installed it
  const LibFacts& lib(const std::string& name) const;
};

// Which file bytes add_layer() must keep for gather_facts().
bool keep_for_facts(const std::string& path, int64_t size);
// Which files add_layer() must stream through the fat-binary scanner (ContentsTree::examine_code).
bool examine_for_facts(const std::string& path);

ContentsFacts gather_facts(const ContentsTree& tree);

}  // namespace imgtool::scan
