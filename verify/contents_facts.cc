#include "verify/contents_facts.h"

#include <algorithm>
#include <regex>
#include <set>

#include "core/version.h"

namespace imgtool::verify {

namespace {

const std::regex kStdlib(R"(^(?:/.*)?/lib/python(3\.\d+)/os\.py$)");
const std::regex kSite(R"(^(.*/lib/python(3\.\d+)/(?:site|dist)-packages)/.*$)");
const std::regex kPaddleDist(R"(^(.*)/(paddlepaddle(?:[_-][a-z0-9]+)?)-([^/-]+)\.dist-info$)");
const std::regex kVenvVersion(R"((?:^|\n)\s*version(?:_info)?\s*=\s*(\d+\.\d+)[^\n]*)");
const std::regex kPyVar(R"((cuda_version|cudnn_version)\s*=\s*'([^']*)')");

// basename regex -> library; group 1 = version.
const std::vector<std::pair<std::regex, std::string>> kLibFiles = {
    {std::regex(R"(^libcudart\.so\.(\d+(?:\.\d+)*)$)"), "cudart"},
    {std::regex(R"(^libcublas\.so\.(\d+(?:\.\d+)*)$)"), "cublas"},
    {std::regex(R"(^libcudnn\.so\.(\d+(?:\.\d+)*)$)"), "cudnn"},
    {std::regex(R"(^libnvinfer\.so\.(\d+(?:\.\d+)*)$)"), "tensorrt"},
};
// dist-info folder name regex -> library; group 1 = version.
const std::vector<std::pair<std::regex, std::string>> kLibDists = {
    {std::regex(R"(^nvidia_cuda_runtime(?:_cu\d+)?-(\d+(?:\.\d+)*)\.dist-info$)"), "cudart"},
    {std::regex(R"(^nvidia_cublas(?:_cu\d+)?-(\d+(?:\.\d+)*)\.dist-info$)"), "cublas"},
    {std::regex(R"(^nvidia_cudnn(?:_cu\d+)?-(\d+(?:\.\d+)*)\.dist-info$)"), "cudnn"},
    {std::regex(R"(^tensorrt(?:_cu\d+)?(?:_libs)?-(\d+(?:\.\d+)*)\.dist-info$)"), "tensorrt"},
};

std::string basename_of(const std::string& p) { return p.substr(p.rfind('/') + 1); }

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void note_lib(ContentsFacts& f, const std::string& lib, const std::string& version, const std::string& path) {
  LibFacts& l = f.libs[lib];
  l.paths.push_back(path);
  auto have = Version::parse(l.version), v = Version::parse(version);
  if (!have || (v && v->parts.size() > have->parts.size())) l.version = version;
}

std::string py_var(const std::string& text, const std::string& name) {
  for (std::sregex_iterator it(text.begin(), text.end(), kPyVar), end; it != end; ++it)
    if ((*it)[1] == name) return (*it)[2];
  return "";
}

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
  const FsEntry* md = t.find(d.location + "/METADATA");
  bool nvidia_deps = md && md->content && md->content->find("Requires-Dist: nvidia-") != std::string::npos;
  bool phi_gpu = t.find(site + "/paddle/libs/libphi_gpu.so") != nullptr;
  d.gpu = d.name == "paddlepaddle-gpu" || nvidia_deps || phi_gpu;
  d.gpu_evidence = d.name == "paddlepaddle-gpu" ? "distribution name paddlepaddle-gpu"
                   : nvidia_deps                ? "METADATA requires nvidia-* packages"
                   : phi_gpu                    ? "paddle/libs/libphi_gpu.so present"
                                                : "no GPU evidence (no version file, CPU name, no nvidia deps)";
}

void scan_dist(const ContentsTree& t, const std::string& path, ContentsFacts& f) {
  std::smatch m;
  std::string base = basename_of(path);
  for (const auto& [re, lib] : kLibDists)
    if (std::regex_match(base, m, re)) note_lib(f, lib, m[1], path);
  if (!std::regex_match(path, m, kPaddleDist)) return;
  PaddleDist d;
  d.name = m[2];
  std::replace(d.name.begin(), d.name.end(), '_', '-');
  d.version = m[3];
  d.location = path;
  std::string site = m[1];
  if (std::regex_match(path, m, kSite)) d.python = m[2];
  classify_build(t, site, d);
  f.paddles.push_back(d);
}

void scan_path(const ContentsTree& t, const std::string& path, const FsEntry& e, ContentsFacts& f) {
  std::smatch m;
  if (std::regex_match(path, m, kStdlib)) f.pythons.push_back(m[1]);
  std::string base = basename_of(path);
  if (base == "pyvenv.cfg" && e.content && std::regex_search(*e.content, m, kVenvVersion))
    f.venv_pythons.push_back(m[1]);
  // A distribution is known by its dist-info/METADATA file (dir entries may be absent).
  std::string dist = base == "METADATA" ? path.substr(0, path.rfind('/')) : "";
  if (ends_with(dist, ".dist-info")) scan_dist(t, dist, f);
  if (e.type == FsEntry::Type::kDir) return;
  for (const auto& [re, lib] : kLibFiles)
    if (std::regex_match(base, m, re) && t.resolve(path)) note_lib(f, lib, m[1], path);
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
  return ends_with(path, "/paddle/version/__init__.py");
}

ContentsFacts gather_facts(const ContentsTree& tree) {
  ContentsFacts f;
  for (const auto& [path, e] : tree.entries()) scan_path(tree, path, e, f);
  sort_unique(f.pythons);
  sort_unique(f.venv_pythons);
  return f;
}

}  // namespace imgtool::verify
