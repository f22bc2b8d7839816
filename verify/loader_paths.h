// Can the image's CUDA libraries be FOUND at run time, not just do they exist?
// Each library is looked up the way the dynamic loader and Paddle's own loader
// would look it up inside the container:
//   1. LD_LIBRARY_PATH from the image config's Env;
//   2. the directories of /etc/ld.so.conf (with its `include` globs, as the
//      ld.so.cache that `ldconfig` builds from them);
//   3. the loader's trusted defaults (/lib, /usr/lib, their x86_64-linux-gnu
//      and lib64 variants);
//   4. Paddle's own search path: <site-packages>/paddle/libs and the pip layout
//      <site-packages>/nvidia/*/lib (Paddle 3's dynload looks there).
// Names looked up: the soname of each CUDA library the image contains
// (libcudart.so.11.0, libcublas.so.11, libcublasLt.so.11, libcudnn.so.8,
// libnccl.so.2, libnvinfer.so.8, ...: the shortest versioned name present)
// and, for a Paddle 2.x GPU build, `libcudnn.so` (Paddle 2.x dlopens the
// unversioned name). A library that exists but is in none of those places is a
// failure ("contents.loader.<name>") whose fix names its directory.
#pragma once
#include <string>
#include <vector>

#include "verify/contents_facts.h"
#include "verify/contents_tree.h"
#include "verify/report_model.h"

namespace imgtool::verify {

struct SearchDir {
  std::string dir;
  std::string via;  // "LD_LIBRARY_PATH", "/etc/ld.so.conf.d/x.conf", "default", "Paddle"
};

// The directories searched, in order. `env` = the config's Env ("K=V" strings).
std::vector<SearchDir> loader_search_dirs(const ContentsTree& tree, const ContentsFacts& facts,
                                          const std::vector<std::string>& env);

// Which of these files' bytes add_layer() must keep (ld.so.conf and its includes).
bool keep_for_loader(const std::string& path, int64_t size);

// One row per library name looked up (none for an image without CUDA libraries).
std::vector<CheckResult> check_loader_paths(const ContentsTree& tree, const ContentsFacts& facts,
                                            const std::vector<std::string>& env);

}  // namespace imgtool::verify
