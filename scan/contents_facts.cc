#include "scan/contents_facts.h"

#include <algorithm>
#include <set>

#include "core/version.h"
#include "scan/name_match.h"

namespace imgtool::scan {

namespace {

// basename "PREFIX<version>" -> library.
const std::vector<std::pair<std::string, std::string>> kLibFiles = {{"libcudart.so.", "cudart"},
                                                                    {"libcublas.so.", "cublas"},
                                                                    {"libcudnn.so.", "cudnn"},
                                                                    {"libnvinfer.so.", "tensorrt"}};
// dist-info "NAME[_cuNN][_libs]-<version>.dist-info" -> library (names::lib_dist).
struct LibDist {
  const char* name;
  bool allow_libs;
  const char* lib;
};
const std::vector<LibDist> kLibDists = {{"nvidia_cuda_runtime", false, "cudart"},
                                        {"nvidia_cublas", false, "cublas"},
                                        {"nvidia_cudnn", false, "cudnn"},
                                        {"tensorrt", true, "tensorrt"}};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void note_lib(ContentsFacts& f, const std::string& lib, const std::string& version, const std::string& path) {
  LibFacts& l = f.libs[lib];
  l.paths.push_back(path);
  auto have = Version::parse(l.version), v = Version::parse(version);
  if (!have || (v && v->parts.size() > have->parts.size())) l.version = version;
}

std::string py_var(const std::string& text, const std::string& name) { return names::py_string_var(text, name); }

bool is_unset(const std::string& v) { return v.empty() || v == "False" || v == "None"; }

// Applies the GPU-build rule (see the header) to one distribution.
void classify_build(const ContentsTree& t, const std::string& site, PaddleDist& d) {
  const FsEntry* vf = t.find(site + "/paddle/version/__init__.py");
  if (vf && vf->content) {
    std::string cuda = py_var(*vf->content, "cuda_version");
    d.gpu = !is_unset(cuda);
    d.compiled_cuda = d.gpu ? cuda : "";
    std::string cudnn = py_var(*vf->content, "cudnn_version");
    d.compiled_cudnn = is_unset(cudnn) ? "" : cudnn;
    d.gpu_evidence = "paddle/version/__init__.py cuda_version='" + cuda + "'";
    return;
  }
  bool nvidia_deps = d.pip_cuda_libraries;
  bool phi_gpu = t.find(site + "/paddle/libs/libphi_gpu.so") != nullptr;
  d.gpu = d.name == "paddlepaddle-gpu" || nvidia_deps || phi_gpu;
  d.gpu_evidence = d.name == "paddlepaddle-gpu" ? "distribution name paddlepaddle-gpu"
                   : nvidia_deps                ? "METADATA requires nvidia-* packages"
                   : phi_gpu                    ? "paddle/libs/libphi_gpu.so present"
                                                : "no GPU evidence (no version file, CPU name, no nvidia deps)";
}

// <site>/paddle/libs/libphi*.so*, <site>/paddle/base/libpaddle.so, <site>/paddle/fluid/libpaddle.so.
bool framework_library(const std::string& path) {
  std::string base = basename_of(path), dir = dirname_of(path);
  auto ends = [](const std::string& s, const std::string& x) { return ends_with(s, x); };
  return (ends(dir, "/paddle/libs") && base.rfind("libphi", 0) == 0 && base.find(".so") != std::string::npos) ||
         ((ends(dir, "/paddle/base") || ends(dir, "/paddle/fluid")) && base == "libpaddle.so");
}

void gather_code(const ContentsTree& t, const std::string& site, PaddleDist& d) {
  const std::string paddle = site + "/paddle/";
  for (auto it = t.entries().lower_bound(paddle); it != t.entries().end() && it->first.rfind(paddle, 0) == 0; ++it)
    if (it->second.gpu_code && framework_library(it->first)) {
      d.gpu_code.merge(*it->second.gpu_code);
      if (it->second.dlopen_names)
        d.dlopen_names.insert(it->second.dlopen_names->begin(), it->second.dlopen_names->end());
      d.code_libraries.push_back(it->first);
    }
}

// "<parent>/NAME-VERSION.dist-info/RECORD": each "relative/path,hash,size" line names a file the
// distribution installed, relative to <parent> (the site folder, or a wheel unpacked elsewhere).
void read_record(const std::string& dist_info, const std::string& text, ContentsFacts& f) {
  std::string name = basename_of(dist_info), parent = dirname_of(dist_info);
  std::string version = name.substr(0, name.size() - 10);  // without ".dist-info"
  version = version.substr(version.rfind('-') + 1);
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? text.size() : nl + 1;
    std::string rel = line.substr(0, line.find(','));
    if (rel.empty() || rel.find(".so") == std::string::npos) continue;
    f.owners[ContentsTree::normalize(parent + "/" + rel)] = {name, version};
  }
}

void scan_dist(const ContentsTree& t, const std::string& path, ContentsFacts& f) {
  std::string base = basename_of(path);
  for (const auto& d : kLibDists)
    if (auto v = names::lib_dist(base, d.name, d.allow_libs)) note_lib(f, d.lib, *v, path);
  auto dist = names::paddle_dist(path);
  if (!dist) return;
  PaddleDist d;
  d.name = dist->name;
  std::replace(d.name.begin(), d.name.end(), '_', '-');
  d.version = dist->version;
  d.location = path;
  if (auto site = names::site_packages(path)) d.python = site->python;
  const FsEntry* md = t.find(path + "/METADATA");
  d.pip_cuda_libraries = md && md->content && md->content->find("Requires-Dist: nvidia-") != std::string::npos;
  classify_build(t, dist->parent, d);
  gather_code(t, dist->parent, d);
  f.paddles.push_back(d);
}

void scan_path(const ContentsTree& t, const std::string& path, const FsEntry& e, ContentsFacts& f) {
  if (auto v = names::stdlib_python(path)) f.pythons.push_back(*v);
  std::string base = basename_of(path);
  if (base == "pyvenv.cfg" && e.content)
    if (auto v = names::venv_version(*e.content)) f.venv_pythons.push_back(*v);
  // A distribution is known by its dist-info/METADATA file (dir entries may be absent).
  std::string dist = base == "METADATA" ? path.substr(0, path.rfind('/')) : "";
  if (ends_with(dist, ".dist-info")) scan_dist(t, dist, f);
  if (base == "RECORD" && e.content && ends_with(dirname_of(path), ".dist-info"))
    read_record(dirname_of(path), *e.content, f);
  if (e.type == FsEntry::Type::kDir) return;
  for (const auto& [prefix, lib] : kLibFiles)
    if (auto v = names::versioned(base, prefix); v && t.resolve(path)) note_lib(f, lib, *v, path);
  if (base == "libcudnn.so") f.cudnn_links.push_back({path, t.resolve(path).value_or("")});
}

void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

const LibFacts& ContentsFacts::lib(const std::string& name) const {
  static const LibFacts none;
  auto it = libs.find(name);
  return it == libs.end() ? none : it->second;
}

bool keep_for_facts(const std::string& path, int64_t size) {
  if (size > (1 << 20)) return false;
  std::string base = basename_of(path);
  if (base == "pyvenv.cfg") return true;
  if (base == "METADATA") return path.find("/paddlepaddle") != std::string::npos;
  // The RECORD of a pip-installed NVIDIA library or TensorRT: which version each .so file is.
  if (base == "RECORD") {
    std::string dist = basename_of(dirname_of(path));
    return ends_with(dist, ".dist-info") && (dist.rfind("nvidia_", 0) == 0 || dist.rfind("tensorrt", 0) == 0);
  }
  return ends_with(path, "/paddle/version/__init__.py");
}

bool examine_for_facts(const std::string& path) { return framework_library(path); }

ContentsFacts gather_facts(const ContentsTree& tree) {
  ContentsFacts f;
  for (const auto& [path, e] : tree.entries()) scan_path(tree, path, e, f);
  sort_unique(f.pythons);
  sort_unique(f.venv_pythons);
  return f;
}

}  // namespace imgtool::scan
