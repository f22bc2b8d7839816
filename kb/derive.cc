#include "kb/derive.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "core/strings.h"
#include "core/version.h"
#include "matrix/rules.h"

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

// The names among `names` that are `lib`'s (libcublas.so*), or "none".
std::string lib_names(const std::vector<std::string>& names, const matrix::NvidiaLibrary& lib) {
  std::string base = lib.unversioned(), out;
  for (const auto& n : names)
    if (n == base || n.rfind(base + ".", 0) == 0) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
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

// {"3.9", "3.13", "3.10"} -> "3.9-3.13", the range the KB's `python:` takes.
std::string python_range(const std::vector<std::string>& classifiers) {
  std::vector<Version> v;
  for (const auto& c : classifiers)
    if (auto p = Version::parse(c)) v.push_back(*p);
  if (v.empty()) return "";
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return lo->text == hi->text ? lo->text : lo->text + "-" + hi->text;
}

// Every string a wheel put in the rows through the one filter (core/strings.h), once, so YAML,
// JSON and a terminal all get escapes instead of control, bidi or zero-width characters.
void make_printable(DerivedRows& d) {
  for (std::string DerivedRows::*f :
       {&DerivedRows::wheel, &DerivedRows::sha256, &DerivedRows::source, &DerivedRows::package, &DerivedRows::version,
        &DerivedRows::series, &DerivedRows::python_tag, &DerivedRows::requires_python, &DerivedRows::python_range,
        &DerivedRows::cuda, &DerivedRows::cudnn, &DerivedRows::nccl, &DerivedRows::tensorrt,
        &DerivedRows::compiled_archs, &DerivedRows::version_file_archs})
    d.*f = strings::printable(d.*f);
  for (auto* list : {&d.nvidia_requires, &d.warnings, &d.dlopen_names, &d.dlopen_heads, &d.embedded_names})
    for (auto& s : *list) s = strings::printable(s);
  std::map<std::string, std::string> by_library;
  for (const auto& [path, archs] : d.archs_by_library) by_library[strings::printable(path)] = archs;
  d.archs_by_library = std::move(by_library);
}

void comment(std::string& y, const std::string& text) { y += "# " + strings::printable(text) + "\n"; }

void quoted_value(YAML::Emitter& out, const char* key, const std::string& value) {
  out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << value;
}

// The row of a GPU build, for the release's gpu: list.
void gpu_row(YAML::Emitter& out, const DerivedRows& d) {
  out << YAML::BeginSeq << YAML::BeginMap;
  quoted_value(out, "cuda", d.cuda);
  if (!d.cudnn.empty()) quoted_value(out, "cudnn", d.cudnn);
  if (!d.tensorrt.empty()) quoted_value(out, "trt", d.tensorrt);
  if (!d.nccl.empty()) quoted_value(out, "nccl", d.nccl);
  quoted_value(out, "compiled_archs", d.compiled_archs);
  out << YAML::Key << "pip_cuda_libraries" << YAML::Value << d.pip_cuda_libraries;
  if (!d.nvidia_requires.empty()) {
    out << YAML::Key << "nvidia_requires" << YAML::Value << YAML::BeginSeq;
    for (const auto& r : d.nvidia_requires) out << YAML::DoubleQuoted << r;
    out << YAML::EndSeq;
  }
  quoted_value(out, "archs_source", d.source);
  out << YAML::EndMap << YAML::EndSeq;
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
  std::set<std::string> names, heads;
  for (const auto& [path, n] : w.dlopen_names)
    if (framework_library(path)) names.insert(n.begin(), n.end());
  for (const auto& [path, n] : w.dlopen_heads)
    if (framework_library(path)) heads.insert(n.begin(), n.end());
  std::set<std::string> embedded;
  for (const auto& [path, n] : w.embedded_names)
    if (framework_library(path)) embedded.insert(n.begin(), n.end());
  d.embedded_names.assign(embedded.begin(), embedded.end());
  d.dlopen_names.assign(names.begin(), names.end());
  d.dlopen_heads.assign(heads.begin(), heads.end());
  if (w.compiled_cuda_archs) d.version_file_archs = version_archs(*w.compiled_cuda_archs);
  cross_check(d);
  if (d.gpu && !w.has_version_file)
    d.warnings.push_back("no paddle/version/__init__.py: CUDA and cuDNN are not recorded");
  make_printable(d);
  return d;
}

void cross_check_loads(DerivedRows& d, const matrix::KnowledgeBase& kb) {
  if (!d.gpu || (d.dlopen_names.empty() && d.dlopen_heads.empty()) || d.cuda.empty()) return;
  const matrix::PaddleLoads* loads = kb.paddle_loads(d.version, d.pip_cuda_libraries);
  if (!loads) {
    d.warnings.push_back("the KB has no load table for Paddle " + d.version + " (libraries.yaml paddle_loads)");
    return;
  }
  std::string cuda_major = d.cuda.substr(0, d.cuda.find('.')), cudnn_major = d.cudnn.substr(0, d.cudnn.find('.'));
  for (const auto& l : loads->libs) {
    const matrix::NvidiaLibrary* lib = kb.library(l.lib);
    std::string so = lib->soname(lib->keyed_by == "cudnn" ? cudnn_major : cuda_major);
    if (so.empty()) continue;
    std::string name = matrix::dlopens_unversioned(*loads, l.lib) ? lib->unversioned() : so;
    bool held = std::binary_search(d.dlopen_names.begin(), d.dlopen_names.end(), name) ||
                std::binary_search(d.embedded_names.begin(), d.embedded_names.end(), name);
    // A name of up to 15 characters may be built in code; its head then stands for it.
    bool built =
        name.size() <= 15 && std::binary_search(d.dlopen_heads.begin(), d.dlopen_heads.end(), name.substr(0, 8));
    if (!held && !built)
      d.warnings.push_back("the KB says Paddle " + d.version + " dlopens " + name + " (" + l.lib +
                           "), and its libraries hold no such string (they hold " + lib_names(d.dlopen_names, *lib) +
                           "): fix libraries.yaml paddle_loads from this wheel");
  }
}

// Comments are written line by line (each through printable(): no newline can end one early);
// the data through yaml-cpp, every string double-quoted, so no value can become a key.
std::string render_yaml(const DerivedRows& d) {
  std::string y;
  comment(y, "imgtool kb derive " + d.wheel);
  comment(y, "  " + d.sha256);
  comment(y, "Paddle " + d.version + " (series " + d.series + "), " + d.package + ", Python tag " + d.python_tag +
                 (d.requires_python.empty() ? "" : ", Requires-Python " + d.requires_python) +
                 (d.python_range.empty() ? "" : ", Python classifiers " + d.python_range + " (the release's python:)"));
  for (const auto& w : d.warnings) comment(y, "WARNING: " + w);
  if (!d.dlopen_names.empty())
    comment(y, "library names in its libraries (dlopen): " + strings::join(d.dlopen_names, " "));
  if (!d.dlopen_heads.empty())
    comment(y, "names built in code (their first 8 bytes as immediates): " + strings::join(d.dlopen_heads, " "));
  YAML::Emitter out;
  if (!d.gpu) {
    comment(y, "a CPU wheel: matrix/kb/paddle.yaml, the release's versions: and cpu: entries");
    out << YAML::BeginMap << YAML::Key << "cpu_wheel" << YAML::Value << YAML::Flow << YAML::BeginMap;
    quoted_value(out, "version", d.version);
    quoted_value(out, "python_tag", d.python_tag);
    quoted_value(out, "source", d.source);
    out << YAML::EndMap << YAML::EndMap;
  } else {
    comment(y, "matrix/kb/paddle.yaml, under the " + d.series + " release's gpu: list");
    gpu_row(out, d);
  }
  return y + out.c_str() + "\n";
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
          {"dlopen_names", d.dlopen_names},
          {"dlopen_heads", d.dlopen_heads},
          {"embedded_names", d.embedded_names},
          {"warnings", d.warnings}};
}

}  // namespace imgtool::kb
