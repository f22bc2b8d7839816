// How glibc's loader, and Paddle's own loader before it, find a library inside an image (read
// from its layers, nothing run). Paddle asks for names kb/libraries.yaml lists; the folders, in order:
//   0. Paddle's own folders (a build whose wheel brings its CUDA libraries: <site>/nvidia/<x>/lib,
//      where its FLAGS_*_dir and libpaddle.so's RUNPATH point);
//   1. LD_LIBRARY_PATH from the image config's Env;
//   2. the RUNPATH of the library that dlopens: <site>/paddle/libs ($ORIGIN of libphi.so);
//   3. the folders of /etc/ld.so.conf (with its `include` globs): ld.so.cache as `ldconfig`
//      builds it; the NVIDIA hook runs ldconfig when a container starts with --gpus, so a stale
//      cache in the image does not matter there;
//   4. the loader's trusted defaults (/lib, /usr/lib, their x86_64-linux-gnu and lib64 variants);
//   5. the folders Paddle tries last for some libraries (/usr/local/cuda/lib64 for cuDNN).
// What a library needs in turn (DT_NEEDED, scan/elf_dynamic.h) is searched as ld.so(8) does for
// that object: its DT_RPATH (only when it has no DT_RUNPATH), LD_LIBRARY_PATH, its DT_RUNPATH,
// then ld.so.cache's folders and the defaults; $ORIGIN is the folder the object was found in (the
// path as opened: glibc does not follow the symlink). A name the driver brings at run time (the
// NVIDIA hook mounts libcuda.so.1, libnvidia-*.so.1) is not searched in the image.
// The file found is followed through its symlinks; its version comes from the file name
// (libcudnn.so.8.9.6) or, for a file named only by its soname, from the pip distribution whose
// RECORD lists it (nvidia_cublas_cu12-12.6.4.1). Every other copy of the same library in the
// image is listed too: an older copy found before a newer one is a failure naming both.
#pragma once
#include <string>
#include <vector>

#include "scan/contents_facts.h"
#include "scan/contents_tree.h"

namespace imgtool::scan {

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

// A name some library needs (DT_NEEDED), where the loader finds it.
struct Need {
  std::string by;    // the object whose dynamic section names it (its path as found)
  std::string name;  // the name
  Resolution res;    // where it is found (unsearched for a driver library)
  bool driver = false;
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
  // The dynamic section read off the file at `real` (nullptr: the tree was not asked to read it,
  // ContentsTree::examine_dynamic; `elf == false`: read, but no 64-bit LE ELF).
  const ElfDynamic* dynamic_of(const std::string& real) const;
  // Where the loader looks for a name that the object found at `path` needs or dlopens.
  std::vector<SearchDir> dirs_for(const std::string& path, const ElfDynamic& elf) const;
  // Everything `r` needs, transitively (each library once, at most kMaxNeeds), in the order the
  // loader meets it. `unread` gets the objects whose dynamic section could not be read (no ELF, or
  // a name in it not kept): what they need is not known. A file the tree was not asked to read
  // (no FsEntry::elf) is not followed.
  static constexpr size_t kMaxNeeds = 512;
  std::vector<Need> needs(const Resolution& r, std::vector<std::string>* unread = nullptr) const;
  // What `r` opens itself with dlopen: the names of `family` (a prefix, "libcudnn_") among its own C
  // strings (FsEntry::dlopen_names: the tree must have examined it, examine_for_loader), an
  // unversioned one with r's own major appended (cuDNN 9: "libcudnn_graph.so" -> libcudnn_graph.so.9),
  // each resolved where a dlopen from it looks (dirs_for: its RUNPATH, LD_LIBRARY_PATH, …). Empty when
  // its strings were not read.
  std::vector<Need> dlopens(const Resolution& r, const std::string& family) const;

 private:
  const ContentsTree& tree_;
  const ContentsFacts& facts_;
  std::vector<SearchDir> system_;
};

// The directories a plain dlopen searches, in order. `env` = the config's Env ("K=V" strings).
std::vector<SearchDir> loader_search_dirs(const ContentsTree& tree, const std::vector<std::string>& env);

// Which of these files' bytes add_layer() must keep (ld.so.conf and its includes).
bool keep_for_loader(const std::string& path, int64_t size);
// Which files' dynamic sections add_layer() reads (ContentsTree::examine_dynamic): lib*.so*.
bool read_dynamic_for_loader(const std::string& path);
// Which files' bytes add_layer() scans for GPU code and the names they dlopen (ContentsTree::
// examine_code): Paddle's own libraries (examine_for_facts) and the libraries that load parts of
// themselves with dlopen -- libcudnn.so[.N], whose sub-libraries (libcudnn_cnn_infer.so.8, …) are
// no DT_NEEDED of it (read off nvidia_cudnn_cu11 8.6.0.163's libcudnn.so.8: six names, RUNPATH $ORIGIN).
bool examine_for_loader(const std::string& path);
// A name the driver brings into a container at run time (libcuda.so.1, libnvidia-ml.so.1, …).
bool driver_library(const std::string& name);

}  // namespace imgtool::scan
