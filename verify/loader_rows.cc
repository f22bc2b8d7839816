#include "verify/loader_rows.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/strings.h"
#include "core/version.h"
#include "matrix/rules.h"
#include "scan/loader.h"
#include "scan/name_match.h"

namespace imgtool::verify {

namespace names = scan::names;

namespace {

// The CUDA libraries whose lookup the generic rows check: basenames STEM.so.N[.N…] (names::versioned:
// plain string code, never std::regex on a layer's paths).
const char* const kCudaLibs[] = {"libcudart", "libcublas", "libcublasLt", "libcudnn",    "libnccl", "libnvinfer",
                                 "libnvrtc",  "libcurand", "libcusolver", "libcusparse", "libcufft"};

std::optional<std::string> cuda_lib_stem(const std::string& base) {
  for (const char* stem : kCudaLibs)
    if (names::versioned(base, std::string(stem) + ".so.")) return std::string(stem);
  return std::nullopt;
}

std::string major_part(const std::string& v) { return v.substr(0, v.find('.')); }

bool version_older(const std::string& a, const std::string& b) {
  auto va = Version::parse(a), vb = Version::parse(b);
  return va && vb && *va < *vb;
}

// The folders a pip-installed copy of `lib` lies in under `site` (Paddle's flag folders and
// libpaddle.so's RUNPATH point there).
std::vector<scan::SearchDir> pip_dirs(const matrix::NvidiaLibrary& lib, const std::string& key,
                                      const std::string& site) {
  std::vector<scan::SearchDir> out;
  if (auto d = lib.wheel_dirs.find(key); d != lib.wheel_dirs.end())
    out.push_back({site + "/" + d->second, "Paddle (pip layout)"});
  return out;
}

struct PaddleBuild {
  const scan::PaddleDist* dist = nullptr;
  std::string site, cuda_major, cudnn_major, trt_major;
};

std::string key_for(const matrix::NvidiaLibrary& lib, const PaddleBuild& b) {
  if (lib.keyed_by == "cudnn") return b.cudnn_major;
  if (lib.keyed_by == "tensorrt") return b.trt_major;
  return b.cuda_major;
}

// The library that calls dlopen: of Paddle's own libraries, the one holding the most library
// names (libphi.so; phi/backends/dynload), when its dynamic section was read.
std::optional<std::string> dlopen_caller(const scan::ContentsTree& tree, const scan::PaddleDist& d) {
  std::optional<std::string> best;
  size_t most = 0;
  for (const auto& path : d.code_libraries) {
    const scan::FsEntry* e = tree.find(path);
    if (!e || !e->elf || !e->elf->elf || e->elf->unread || !e->dlopen_names || e->dlopen_names->size() < most) continue;
    if (best && e->dlopen_names->size() == most) continue;
    best = path, most = e->dlopen_names->size();
  }
  return best;
}

// Where dlopen from Paddle looks (ld.so(8), for the calling library): its RPATH (without a
// RUNPATH), LD_LIBRARY_PATH, its RUNPATH, the cache, the defaults. Its dynamic section unread:
// libphi.so's RUNPATH is assumed to be $ORIGIN (<site>/paddle/libs), as in every wheel read so far.
std::vector<scan::SearchDir> paddle_dirs(const scan::ImageLoader& loader, const scan::ContentsTree& tree,
                                         const PaddleBuild& b) {
  if (auto caller = dlopen_caller(tree, *b.dist)) return loader.dirs_for(*caller, *tree.find(*caller)->elf);
  const auto& system = loader.system_dirs();
  std::vector<scan::SearchDir> out;
  size_t i = 0;
  for (; i < system.size() && system[i].via == "LD_LIBRARY_PATH"; ++i) out.push_back(system[i]);
  out.push_back({b.site + "/paddle/libs", "RUNPATH of libphi.so (assumed: its dynamic section was not read)"});
  out.insert(out.end(), system.begin() + static_cast<long>(i), system.end());
  return out;
}

std::string dir_list(const std::vector<scan::SearchDir>& dirs) {
  std::vector<std::string> d;
  for (const auto& s : dirs) d.push_back(s.dir);
  return strings::join(d, ":");
}

// The copies of a library in the image that are newer than the one the loader opens (`res`).
std::vector<scan::LibraryCopy> newer_copies(const std::vector<scan::LibraryCopy>& copies, const scan::Resolution& res) {
  std::vector<scan::LibraryCopy> out;
  for (const auto& c : copies)
    if (c.path != res.real && version_older(res.version, c.version)) out.push_back(c);
  return out;
}

// Names that every image's C runtime provides: listed in a row's text only when they fail.
bool runtime_name(const std::string& n) {
  for (const char* p : {"libc.so", "libm.so", "libdl.so", "libpthread.so", "librt.so", "libgcc_s.so", "libstdc++.so",
                        "libutil.so", "libz.so"})
    if (n.rfind(p, 0) == 0) return true;
  return false;
}

// What the library the loader opens needs in turn (DT_NEEDED, searched as ld.so does for it:
// RPATH, LD_LIBRARY_PATH, RUNPATH, cache, defaults): a name not found fails the row (the dlopen
// itself fails: "libnvJitLink.so.12: cannot open shared object file"), and so does an older copy
// found before a newer one (cuSPARSE then fails on a missing nvJitLink symbol).
void check_needs(const scan::ImageLoader& loader, const scan::Resolution& res, CheckResult& r) {
  std::vector<std::string> unread, listed, missing;
  for (const auto& n : loader.needs(res, &unread)) {
    if (n.driver) {
      if (n.name.rfind("libcuda.so", 0) == 0) listed.push_back(n.name + " (from the driver at run time)");
      continue;
    }
    std::string by = scan::basename_of(n.by);
    if (!n.res.found()) {
      missing.push_back(n.name + " (needed by " + by + ")");
      continue;
    }
    if (!runtime_name(n.name)) listed.push_back(n.name + " -> " + n.res.real + " (via " + n.res.via + ")");
    for (const auto& c : newer_copies(loader.copies(n.name), n.res)) {
      r.status = Status::kFail;
      r.found += "; " + by + " needs " + n.name + ": the loader opens " + n.res.real + " (" + n.res.version +
                 ") before the newer " + c.path + " (" + c.version + ")";
      r.fix = "put " + scan::dirname_of(c.path) + " before " + scan::dirname_of(n.res.path) +
              " (or remove the older copy): " + by + " needs the newer " + n.name;
    }
  }
  if (!listed.empty()) r.found += "; needs " + strings::join(listed, ", ");
  if (!unread.empty())
    r.found += "; what " + strings::join(unread, ", ") + " needs is unknown (dynamic section not read)";
  if (missing.empty()) return;
  r.status = Status::kFail;
  r.found += "; the loader finds no " + strings::join(missing, ", ");
  r.fix = "install what it needs where its RUNPATH (or the loader's folders) points: " + strings::join(missing, ", ");
}

// Libraries that load parts of themselves with dlopen, not DT_NEEDED: their own C strings of that
// family are followed like needs (scan::ImageLoader::dlopens). cuDNN: libcudnn.so.8 holds the six
// libcudnn_*_{infer,train}.so.8 it opens (nvidia_cudnn_cu11 8.6.0.163, read with strings(1) and
// scan/dlopen_names.h; on the real 2.6.2 GPU cell: all six found, each one's needs too); cuDNN 9's
// libcudnn.so.9 holds libcudnn_{graph,ops,cnn,adv}.so unversioned and its wheel ships them .so.9
// (nvidia_cudnn_cu12 9.5.1.17, nvidia_cudnn_cu13 9.13.0.50).
const std::map<std::string, std::string> kDlopenFamilies = {{"libcudnn.so", "libcudnn_"}};

// What the library the loader opens dlopens of itself (its sub-libraries, kDlopenFamilies), found
// where a dlopen from it looks, and what those need in turn: one missing fails the row, as the first
// convolution would ("Could not load library libcudnn_cnn_infer.so.8").
void check_dlopens(const scan::ImageLoader& loader, const std::string& soname, const scan::Resolution& res,
                   CheckResult& r) {
  std::string stem = soname.substr(0, soname.find(".so") + 3);
  auto family = kDlopenFamilies.find(stem);
  if (family == kDlopenFamilies.end()) return;
  std::vector<std::string> opened, missing;
  for (const auto& d : loader.dlopens(res, family->second)) {
    if (!d.res.found()) {
      missing.push_back(d.name);
      continue;
    }
    opened.push_back(d.name + " -> " + d.res.real);
    CheckResult sub{r.id, r.title, Status::kPass, "", "", ""};
    check_needs(loader, d.res, sub);
    if (sub.status == Status::kFail) {
      r.status = Status::kFail;
      r.found += "; its " + d.name + sub.found;
      r.fix = sub.fix;
    }
  }
  if (!opened.empty()) r.found += "; dlopens " + strings::join(opened, ", ");
  if (missing.empty()) return;
  r.status = Status::kFail;
  r.found += "; " + scan::basename_of(res.real) + " dlopens " + strings::join(missing, ", ") +
             ", which the loader finds nowhere it looks from " + scan::dirname_of(res.path);
  r.fix = "install cuDNN whole (every " + family->second + "*.so library beside " + scan::basename_of(res.real) +
          "): " + strings::join(missing, ", ");
}

CheckResult library_row(const scan::ImageLoader& loader, const std::string& id, const std::string& title,
                        const std::string& name, const std::string& soname, const std::vector<scan::SearchDir>& dirs) {
  CheckResult r{id, title, Status::kPass, name + " found by the loader", "", ""};
  scan::Resolution res = loader.resolve(name, dirs);
  auto copies = loader.copies(soname);
  if (!res.found()) {
    r.status = Status::kFail;
    std::vector<std::string> held;
    for (const auto& c : copies) held.push_back(c.path);
    r.found = "dlopen(\"" + name + "\") finds nothing in " + dir_list(dirs) +
              (held.empty() ? "; the image holds no " + soname : "; the image holds " + strings::join(held, ", "));
    r.fix = held.empty()     ? "install " + soname + " in the image (the base's CUDA libraries, or the nvidia-* wheel)"
            : name == soname ? "add " + scan::dirname_of(held.front()) +
                                   " to a file in /etc/ld.so.conf.d/ and run ldconfig in the image"
                             : "link it in a folder the loader searches: ln -s " + held.front() +
                                   " /usr/local/lib/paddle-dynload/" + name +
                                   " plus that folder in /etc/ld.so.conf.d/ and ldconfig (imgtool's template does this "
                                   "for Paddle's cells)";
    return r;
  }
  r.found = res.describe();
  for (const auto& c : newer_copies(copies, res)) {
    r.status = Status::kFail;
    r.found += "; a newer copy, " + c.path + " (" + c.version + "), comes after it";
    r.fix = "remove the older copy " + res.real + ", or put " + scan::dirname_of(c.path) + " before " +
            scan::dirname_of(res.path) + " in the loader's order";
  }
  check_needs(loader, res, r);
  check_dlopens(loader, soname, res, r);
  return r;
}

std::optional<PaddleBuild> gpu_build(const scan::ContentsFacts& facts, const Claims& claims) {
  for (const auto& d : facts.paddles) {
    if (!d.gpu) continue;
    auto site = names::site_packages(d.location);
    if (!site) continue;
    PaddleBuild b{&d, site->dir, major_part(d.compiled_cuda.empty() ? claims.label("cuda") : d.compiled_cuda),
                  major_part(d.compiled_cudnn.empty() ? claims.label("cudnn") : d.compiled_cudnn),
                  major_part(claims.label("tensorrt"))};
    return b;
  }
  return std::nullopt;
}

// cuDNN's version against the io.imgtool.cudnn claim: the file the loader opens is the one that counts.
void check_cudnn_claim(CheckResult& r, const scan::ImageLoader& loader, const std::string& name,
                       const std::vector<scan::SearchDir>& dirs, const std::string& claim) {
  scan::Resolution res = loader.resolve(name, dirs);
  if (!res.found() || claim.empty() || r.status == Status::kFail) return;
  if (res.version.empty()) {
    r.status = Status::kWarn;
    r.found += "; its version is unknown (no version in its name, no RECORD lists it)";
    return;
  }
  auto want = Version::parse(claim), got = Version::parse(res.version);
  if (want && got && want->is_prefix_of(*got)) return;
  r.status = Status::kFail;
  r.expected += " at the claimed cuDNN " + claim;
  r.fix = "the loader opens cuDNN " + res.version + ", not the claimed " + claim + ": install cuDNN " + claim +
          " where the loader finds it first, or fix io.imgtool.cudnn";
}

// The one name of `lib` (libcufft.so, libcufft.so.10, …) that Paddle's own libraries hold as a C
// string, or "" when they hold none of its names or several (the KB's name decides then: a short
// name may be built in code, scan/dlopen_names.h).
std::string held_name(const std::set<std::string>& names, const matrix::NvidiaLibrary& lib) {
  std::string base = lib.unversioned(), found;
  for (const auto& n : names) {
    if (n != base && n.rfind(base + ".", 0) != 0) continue;
    if (!found.empty()) return "";
    found = n;
  }
  return found;
}

// loader.cuda: Paddle dlopens the unversioned libcuda.so (the driver API: CINN, the VMM allocator,
// JIT). The driver brings it at run time: the NVIDIA Container Toolkit mounts libcuda.so.<ver> and
// links libcuda.so -> libcuda.so.1 (legacy hook: always; CDI: from 1.17.0), but KEEPS a link the
// image already has, and a libcuda the image ships is found instead of the host's
// (matrix/kb/sources/libcuda-in-containers.md). So the image must hold none in the loader's way:
// a stub (CUDA_ERROR_STUB_LIBRARY), its own driver copy, or a link to another name.
CheckResult driver_row(const scan::ImageLoader& loader, const scan::ContentsTree& tree,
                       const std::vector<scan::SearchDir>& dirs) {
  CheckResult r{"loader.cuda",
                "libcuda.so (the driver API) comes from the host driver",
                Status::kPass,
                "the image holds no libcuda.so* where dlopen(\"libcuda.so\") looks",
                "no libcuda in the loader's folders: the NVIDIA Container Toolkit mounts the driver's and links "
                "libcuda.so -> libcuda.so.1 at run time (legacy hook: always; CDI: from toolkit 1.17.0)",
                ""};
  for (const std::string name : {"libcuda.so", "libcuda.so.1"}) {
    for (const auto& d : dirs) {
      const scan::FsEntry* link = tree.find(d.dir + "/" + name);
      if (name == "libcuda.so" && link && link->type == scan::FsEntry::Type::kSymlink &&
          scan::basename_of(link->link) != "libcuda.so.1") {
        r.status = Status::kFail;
        r.found = d.dir + "/libcuda.so -> " + link->link + " (via " + d.via +
                  "): the toolkit keeps an image's own link, so the host driver's libcuda.so.1 is not what it opens";
        r.fix = "remove " + d.dir + "/libcuda.so from the image (or link it to libcuda.so.1)";
        return r;
      }
    }
    scan::Resolution res = loader.resolve(name, dirs);
    if (!res.found()) continue;
    bool stub = res.real.find("/stubs/") != std::string::npos, compat = res.real.find("/compat/") != std::string::npos;
    r.status = compat ? Status::kWarn : Status::kFail;
    r.found = "dlopen(\"" + name + "\") opens the image's own " + res.describe() +
              (stub     ? ": the CUDA stub, which returns CUDA_ERROR_STUB_LIBRARY (34) for every call"
               : compat ? ": cuda-compat's forward-compatibility driver, used instead of the host's (data-center GPUs "
                          "on a supported driver branch only)"
                        : ": a driver library inside the image, used instead of the host's");
    r.fix = stub ? "take " + scan::dirname_of(res.path) + " (" + res.via +
                       ") out of the loader's folders: stubs are for linking only"
            : compat ? "enable cuda-compat only for hosts that need it (opt-in), not in the default image"
                     : "remove " + res.real + " from the image: the host's driver is mounted at run time";
    return r;
  }
  return r;
}

}  // namespace

PaddleLibraryRows check_paddle_libraries(const scan::ContentsTree& tree, const scan::ContentsFacts& facts,
                                         const std::vector<std::string>& env, const Claims& claims,
                                         const matrix::KnowledgeBase& kb) {
  auto build = gpu_build(facts, claims);
  if (!build) return {};
  const scan::PaddleDist& d = *build->dist;
  const matrix::PaddleLoads* loads = kb.paddle_loads(d.version, d.pip_cuda_libraries);
  if (!loads)
    return {{{"loader.paddle", "the libraries Paddle loads are known", Status::kWarn,
              "a load table for Paddle " + d.version + (d.pip_cuda_libraries ? " (pip CUDA libraries)" : ""),
              "none in " + kb.dir() + "/libraries.yaml",
              "add its paddle_loads row (phi/backends/dynload of that release)"}},
            {}};
  scan::ImageLoader loader(tree, facts, env);
  std::vector<scan::SearchDir> base_dirs = paddle_dirs(loader, tree, *build);
  PaddleLibraryRows out;
  for (const auto& l : loads->libs) {
    const matrix::NvidiaLibrary* lib = kb.library(l.lib);
    std::string key = key_for(*lib, *build), soname = lib->soname(key);
    if (soname.empty()) continue;  // nvJitLink on CUDA 11: no such library
    std::string name = matrix::dlopens_unversioned(*loads, l.lib) ? lib->unversioned() : soname;
    // The exact string Paddle asks for, when its libraries show it: not the KB's per-major guess.
    std::string held = held_name(d.dlopen_names, *lib), source = "";
    if (!held.empty() && held != name) name = held, source = " (the name Paddle's libraries hold; the KB says another)";
    std::vector<scan::SearchDir> dirs =
        d.pip_cuda_libraries ? pip_dirs(*lib, key, build->site) : std::vector<scan::SearchDir>{};
    dirs.insert(dirs.end(), base_dirs.begin(), base_dirs.end());
    if (auto x = loads->extra_dirs.find(l.lib); x != loads->extra_dirs.end())
      for (const auto& e : x->second) dirs.push_back({e, "Paddle's extra folder"});
    CheckResult r =
        library_row(loader, "loader." + l.lib, "Paddle " + d.version + " loads " + name + source + ": " + l.feature,
                    name, soname, dirs);
    if (l.lib == "cudnn") check_cudnn_claim(r, loader, name, dirs, claims.label("cudnn"));
    if (r.status == Status::kFail && l.need == "feature") {
      r.status = Status::kWarn;
      r.fix = "only " + l.feature + " needs it: " + r.fix;
    }
    if (loads->unconfirmed) r.expected += " (UNCONFIRMED load table: " + kb.dir() + "/libraries.yaml)";
    out.rows.push_back(std::move(r));
    out.sonames.push_back(soname);
  }
  out.rows.push_back(driver_row(loader, tree, base_dirs));
  return out;
}

std::vector<CheckResult> check_base_libraries(const scan::ContentsTree& tree, const scan::ContentsFacts& facts,
                                              const std::vector<std::string>& env, const std::string& cuda,
                                              const matrix::KnowledgeBase& kb) {
  const matrix::CudaWheelBase* pins = kb.cuda_wheels(cuda);
  const matrix::RuntimeSet* set = kb.runtime_set(major_part(cuda));
  if (!pins || !set)
    return {{"base.libraries", "the base's library set is known", Status::kFail,
             "a kb/cuda_wheels.yaml row for CUDA " + cuda, "none",
             "add the CUDA " + cuda + " row (its wheels) to matrix/kb/cuda_wheels.yaml"}};
  scan::ImageLoader loader(tree, facts, env);
  std::vector<CheckResult> out;
  for (const auto& name : set->libs) {
    const matrix::NvidiaLibrary* lib = kb.library(name);
    std::string soname = lib->soname(lib->keyed_by == "cudnn" ? major_part(pins->cudnn) : cuda);  // the line's own
    const matrix::CudaWheel* w = pins->wheel_providing(soname);
    CheckResult r = library_row(loader, "base." + name, soname + " resolves at the pinned version", soname, soname,
                                loader.system_dirs());
    r.expected = soname + " " + (w ? w->package + " " + w->version : std::string("(no pinned wheel ships it)")) +
                 ", found by the loader";
    scan::Resolution res = loader.resolve(soname, loader.system_dirs());
    if (r.status == Status::kPass && (!w || res.version != w->version)) {
      r.status = Status::kFail;
      r.fix = "rebuild the base with scripts/make-cuda-base.sh " + cuda + " (its pins: matrix/kb/cuda_wheels.yaml)";
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<CheckResult> check_loader_paths(const scan::ContentsTree& tree, const scan::ContentsFacts& facts,
                                            const std::vector<std::string>& env,
                                            const std::vector<std::string>& covered) {
  std::map<std::string, std::string> soname;  // stem -> the shortest versioned name present
  for (const auto& [path, e] : tree.entries()) {
    std::string base = scan::basename_of(path);
    auto stem = e.type == scan::FsEntry::Type::kDir ? std::nullopt : cuda_lib_stem(base);
    if (!stem || !tree.resolve(path)) continue;
    std::string& s = soname[*stem];
    if (s.empty() || std::count(base.begin(), base.end(), '.') < std::count(s.begin(), s.end(), '.')) s = base;
  }
  scan::ImageLoader loader(tree, facts, env);
  std::vector<scan::SearchDir> dirs = loader.system_dirs();
  for (const auto& p : facts.paddles)
    if (auto site = names::site_packages(p.location)) {
      dirs.push_back({site->dir + "/paddle/libs", "Paddle"});
      std::set<std::string>
          libdirs;  // <site>/nvidia/<pkg>/lib, from any entry under it (layers may omit directory entries)
      const std::string nv = site->dir + "/nvidia/";
      for (auto it = tree.entries().lower_bound(nv); it != tree.entries().end() && it->first.rfind(nv, 0) == 0; ++it) {
        auto slash = it->first.find('/', nv.size());
        if (slash != std::string::npos && it->first.compare(slash, 5, "/lib/") == 0)
          libdirs.insert(it->first.substr(0, slash + 4));
      }
      for (const auto& d : libdirs) dirs.push_back({d, "Paddle (pip layout)"});
    }
  std::vector<CheckResult> out;
  for (const auto& [stem, name] : soname) {
    if (std::count(covered.begin(), covered.end(), name)) continue;
    out.push_back(library_row(loader, "contents.loader." + name, name + " is found at run time", name, name, dirs));
  }
  return out;
}

}  // namespace imgtool::verify
