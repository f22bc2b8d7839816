// Can the libraries Paddle loads be FOUND at run time, and is what the loader finds the library the
// image claims? Every name is looked up the way glibc's loader, and Paddle's own loader before it,
// look it up inside the container (kb/libraries.yaml says what Paddle asks for):
//   0. Paddle's own folders (a build whose wheel brings its CUDA libraries: <site>/nvidia/<x>/lib,
//      where its FLAGS_*_dir and libpaddle.so's RUNPATH point);
//   1. LD_LIBRARY_PATH from the image config's Env;
//   2. the RUNPATH of the library that dlopens: <site>/paddle/libs ($ORIGIN of libphi.so);
//   3. the folders of /etc/ld.so.conf (with its `include` globs): ld.so.cache as `ldconfig`
//      builds it; the NVIDIA hook runs ldconfig when a container starts with --gpus, so a stale
//      cache in the image does not matter there;
//   4. the loader's trusted defaults (/lib, /usr/lib, their x86_64-linux-gnu and lib64 variants);
//   5. the folders Paddle tries last for some libraries (/usr/local/cuda/lib64 for cuDNN).
// The file found is followed through its symlinks; its version comes from the file name
// (libcudnn.so.8.9.6) or, for a file named only by its soname, from the pip distribution whose
// RECORD lists it (nvidia_cublas_cu12-12.6.4.1). Every other copy of the same library in the
// image is listed too: an older copy found before a newer one is a failure naming both.
//
// Rows (each names the file, what the loader does, and the fix):
//   loader.<lib>     one per library the installed Paddle GPU build loads (required: fail when
//                    unfound; a feature's: warn naming the feature); cuDNN's version against the
//                    io.imgtool.cudnn claim
//   base.<lib>       a CUDA base image (label io.imgtool.base.cuda): every library of nvidia/cuda's
//                    -cudnn-runtime set resolves, at the version kb/cuda_wheels.yaml pins
//   contents.loader.<soname>  any other CUDA library the image holds is findable
#pragma once
#include <string>
#include <vector>

#include "matrix/kb.h"
#include "verify/claims_model.h"
#include "verify/contents_facts.h"
#include "verify/contents_tree.h"
#include "verify/report_model.h"

namespace imgtool::verify {

struct SearchDir {
  std::string dir;
  std::string via;  // "LD_LIBRARY_PATH", "/etc/ld.so.conf.d/x.conf", "default", "Paddle", "RUNPATH of libphi.so"
};

// What the loader opens for one name, and which file that is.
struct Resolution {
  std::string name;          // the name asked for
  std::string path;          // <dir>/<name> where it was found; "" = not found
  std::string via;           // that folder's source
  std::string real;          // the file after every symlink
  std::string version;       // of the real file ("" = unknown)
  std::string version_from;  // "its file name" or the distribution whose RECORD lists it
  bool found() const { return !path.empty(); }
  std::string describe() const;  // "<path> -> <real> (<version>, via <via>)"
};

// A copy of a library in the image: a regular file named <soname> or <soname>.<more>.
struct LibraryCopy {
  std::string path, version;
};

class ImageLoader {
 public:
  ImageLoader(const ContentsTree& tree, const ContentsFacts& facts, const std::vector<std::string>& env);
  // LD_LIBRARY_PATH, the ld.so.conf folders, the defaults: what a plain dlopen searches.
  const std::vector<SearchDir>& system_dirs() const { return system_; }
  Resolution resolve(const std::string& name, const std::vector<SearchDir>& dirs) const;
  // Every regular file of the library whose soname is `soname` (other copies), with its version.
  std::vector<LibraryCopy> copies(const std::string& soname) const;
  std::string version_of(const std::string& real, std::string* from = nullptr) const;

 private:
  const ContentsTree& tree_;
  const ContentsFacts& facts_;
  std::vector<SearchDir> system_;
};

// The directories a plain dlopen searches, in order. `env` = the config's Env ("K=V" strings).
std::vector<SearchDir> loader_search_dirs(const ContentsTree& tree, const std::vector<std::string>& env);

// Which of these files' bytes add_layer() must keep (ld.so.conf and its includes).
bool keep_for_loader(const std::string& path, int64_t size);

// loader.<lib> rows: the libraries the installed Paddle GPU build loads (none for a CPU build),
// and the sonames they covered (for check_loader_paths).
struct PaddleLibraryRows {
  std::vector<CheckResult> rows;
  std::vector<std::string> sonames;
};
PaddleLibraryRows check_paddle_libraries(const ContentsTree& tree, const ContentsFacts& facts,
                                         const std::vector<std::string>& env, const Claims& claims,
                                         const matrix::KnowledgeBase& kb);

// base.<lib> rows: a CUDA base's library set at the KB's pins (`cuda` = the base's CUDA, "12.6").
std::vector<CheckResult> check_base_libraries(const ContentsTree& tree, const ContentsFacts& facts,
                                              const std::vector<std::string>& env, const std::string& cuda,
                                              const matrix::KnowledgeBase& kb);

// contents.loader.<soname> rows: every CUDA library the image holds that no loader.<lib> row
// covered (`covered` = sonames already checked) is findable by a plain dlopen, or in Paddle's own
// folders (<site>/paddle/libs, the pip layout <site>/nvidia/*/lib).
std::vector<CheckResult> check_loader_paths(const ContentsTree& tree, const ContentsFacts& facts,
                                            const std::vector<std::string>& env,
                                            const std::vector<std::string>& covered = {});

}  // namespace imgtool::verify
