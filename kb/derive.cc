#include "kb/derive.h"

#include <algorithm>
#include <set>

#include "core/strings.h"
#include "core/version.h"

namespace imgtool::kb {

namespace {

bool unset(const std::string& v) { return v.empty() || v == "False" || v == "None" || v == "0"; }

std::string var(const WheelFacts& w, const std::string& name) {
  auto it = w.version_vars.find(name);
  return it == w.version_vars.end() || unset(it->second) ? "" : it->second;
}

// "nvidia-cudnn-cu12==9.5.1.17; platform_system == 'Linux'" -> "nvidia-cudnn-cu12==9.5.1.17".
std::vector<std::string> nvidia_pins(const std::vector<std::string>& requires_dist) {
  std::vector<std::string> out;
  for (const auto& r : requires_dist) {
    std::string req = strings::trim(r.substr(0, r.find(';')));
    std::string name = strings::lower(req.substr(0, req.find_first_of(" =<>!~[(")));
    if (name.rfind("nvidia-", 0) == 0) out.push_back(req);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The framework's own GPU libraries: what decides where Paddle can run.
bool framework_library(const std::string& path) {
  std::string base = path.substr(path.rfind('/') + 1);
  return (path.rfind("paddle/libs/", 0) == 0 && base.rfind("libphi", 0) == 0) || path == "paddle/base/libpaddle.so" ||
         path == "paddle/fluid/libpaddle.so";
}

GpuCode framework_code(const WheelFacts& w) {
  GpuCode all, own;
  for (const auto& [path, code] : w.gpu_code) {
    all.merge(code);
    if (framework_library(path)) own.merge(code);
  }
  return own.empty() ? all : own;
}

// ["80", "86"] / ["sm_80"] / ["8.0"] -> "sm_80,sm_86" (sorted); the items that are no arch are kept
// as written so the cross-check names them.
std::string version_archs(const std::vector<std::string>& items) {
  std::set<int> archs;
  std::vector<std::string> odd;
  for (const auto& i : items) {
    if (auto a = parse_arch(i))
      archs.insert(*a);
    else
      odd.push_back(i);
  }
  std::string out;
  for (int a : archs) out += (out.empty() ? "sm_" : ",sm_") + std::to_string(a);
  for (const auto& o : odd) out += (out.empty() ? "" : ",") + o;
  return out;
}

std::string python_tag(const WheelFacts& w) {
  std::set<std::string> tags;
  for (const auto& t : w.tags) tags.insert(t.substr(0, t.find('-')));
  return strings::join(std::vector<std::string>(tags.begin(), tags.end()), ",");
}

void cross_check(DerivedRows& d) {
  if (d.version_file_archs.empty() || d.compiled_archs.empty()) return;
  std::string libs_sass;
  for (const auto& a : strings::split(d.compiled_archs, ','))
    if (a.rfind("sm_", 0) == 0) libs_sass += (libs_sass.empty() ? "" : ",") + a;
  if (libs_sass != d.version_file_archs)
    d.warnings.push_back("paddle/version/__init__.py says compiled_cuda_archs " + d.version_file_archs +
                         ", the libraries hold machine code for " + libs_sass +
                         " (the libraries decide where it runs)");
}

std::string q(const std::string& s) { return "\"" + s + "\""; }

// {"3.9", "3.13", "3.10"} -> "3.9-3.13", the range the KB's `python:` takes.
std::string python_range(const std::vector<std::string>& classifiers) {
  std::vector<Version> v;
  for (const auto& c : classifiers)
    if (auto p = Version::parse(c)) v.push_back(*p);
  if (v.empty()) return "";
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return lo->text == hi->text ? lo->text : lo->text + "-" + hi->text;
}

}  // namespace

DerivedRows derive(const WheelFacts& w) {
  DerivedRows d;
  d.wheel = w.file;
  d.sha256 = w.sha256;
  d.source = w.file + " " + w.sha256 + " (imgtool kb derive)";
  d.package = strings::lower(w.name);
  d.version = w.version;
  auto parts = strings::split(w.version, '.');
  d.series = parts.size() >= 2 ? parts[0] + "." + parts[1] : w.version;
  d.python_tag = python_tag(w);
  d.requires_python = w.requires_python;
  d.python_range = python_range(w.python_classifiers);
  d.cuda = var(w, "cuda_version");
  d.cudnn = var(w, "cudnn_version");
  d.nccl = var(w, "nccl_version");
  d.tensorrt = var(w, "tensorrt_version");
  d.nvidia_requires = nvidia_pins(w.requires_dist);
  d.pip_cuda_libraries = !d.nvidia_requires.empty();
  d.gpu = !d.cuda.empty() || d.pip_cuda_libraries || !w.gpu_code.empty();
  GpuCode code = framework_code(w);
  d.compiled_archs = code.text();
  for (const auto& [path, c] : w.gpu_code) d.archs_by_library[path] = c.text();
  if (w.compiled_cuda_archs) d.version_file_archs = version_archs(*w.compiled_cuda_archs);
  cross_check(d);
  if (d.gpu && !w.has_version_file)
    d.warnings.push_back("no paddle/version/__init__.py: CUDA and cuDNN are not recorded");
  return d;
}

std::string render_yaml(const DerivedRows& d) {
  std::string y = "# imgtool kb derive " + d.wheel + "\n#   " + d.sha256 + "\n";
  y += "# Paddle " + d.version + " (series " + d.series + "), " + d.package + ", Python tag " + d.python_tag +
       (d.requires_python.empty() ? "" : ", Requires-Python " + d.requires_python) +
       (d.python_range.empty() ? "" : ", Python classifiers " + d.python_range + " (the release's python:)") + "\n";
  for (const auto& w : d.warnings) y += "# WARNING: " + w + "\n";
  if (!d.gpu) {
    y += "# a CPU wheel: matrix/kb/paddle.yaml, the release's versions: and cpu: entries\n";
    y += "cpu_wheel: {version: " + q(d.version) + ", python_tag: " + q(d.python_tag) + ", source: " + q(d.source) +
         "}\n";
    return y;
  }
  y += "# matrix/kb/paddle.yaml, under the " + d.series + " release's gpu: list\n";
  y += "- cuda: " + q(d.cuda) + "\n";
  if (!d.cudnn.empty()) y += "  cudnn: " + q(d.cudnn) + "\n";
  if (!d.tensorrt.empty()) y += "  trt: " + q(d.tensorrt) + "\n";
  if (!d.nccl.empty()) y += "  nccl: " + q(d.nccl) + "\n";
  y += "  compiled_archs: " + q(d.compiled_archs) + "\n";
  y += "  pip_cuda_libraries: " + std::string(d.pip_cuda_libraries ? "true" : "false") + "\n";
  if (!d.nvidia_requires.empty()) {
    y += "  nvidia_requires:\n";
    for (const auto& r : d.nvidia_requires) y += "    - " + q(r) + "\n";
  }
  y += "  archs_source: " + q(d.source) + "\n";
  return y;
}

nlohmann::json to_json(const DerivedRows& d) {
  return {{"wheel", d.wheel},
          {"sha256", d.sha256},
          {"source", d.source},
          {"package", d.package},
          {"version", d.version},
          {"series", d.series},
          {"python_tag", d.python_tag},
          {"requires_python", d.requires_python},
          {"python_range", d.python_range},
          {"gpu", d.gpu},
          {"cuda", d.cuda},
          {"cudnn", d.cudnn},
          {"nccl", d.nccl},
          {"tensorrt", d.tensorrt},
          {"pip_cuda_libraries", d.pip_cuda_libraries},
          {"nvidia_requires", d.nvidia_requires},
          {"compiled_archs", d.compiled_archs},
          {"version_file_archs", d.version_file_archs},
          {"archs_by_library", d.archs_by_library},
          {"warnings", d.warnings}};
}

}  // namespace imgtool::kb
