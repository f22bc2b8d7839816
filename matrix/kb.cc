#include "matrix/kb.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <optional>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/paths.h"
#include "core/strings.h"
#include "matrix/yaml_doc.h"

namespace imgtool::matrix {

namespace {

// "11.0-11.8" or "12.6" -> VersionRange; checked against the doc position.
VersionRange range_of(const YamlDoc& d, const YAML::Node& n) {
  if (!n.IsScalar()) d.fail(n, "expected a version or a range like 11.0-11.8, found " + describe(n));
  const std::string& s = n.Scalar();
  VersionRange r;
  auto dash = s.find('-');
  r.from = s.substr(0, dash);
  r.to = dash == std::string::npos ? r.from : s.substr(dash + 1);
  if (!Version::parse(r.from) || !Version::parse(r.to))
    d.fail(n, "expected a version or a range like 11.0-11.8, found '" + s + "'");
  return r;
}

// source (required, non-empty), unconfirmed, note: common to every fact.
void read_fact(const YamlDoc& d, const YAML::Node& n, Fact& f) {
  f.source = d.str(n, "source");
  if (f.source.empty()) d.fail(n, "expected a non-empty 'source' for every fact, found ''");
  f.unconfirmed = d.boolean(n, "unconfirmed", false);
  f.note = d.str(n, "note", false);
}

// A fact nested under `key` (min_driver, reported_archs): a map of `value` beside source/unconfirmed/
// note, its Fact fields read into `f`; the node (null when `key` is absent) for the caller's value.
YAML::Node nested_fact(const YamlDoc& d, const YAML::Node& n, const std::string& key, const std::string& value, Fact& f,
                       const std::string& what, const std::string& kind) {
  YAML::Node m = n[key];
  if (!m) return m;
  d.expect_map(m, key + " (" + what + ")");
  d.check_keys(m, {value, "source", "unconfirmed", "note"}, kind);
  read_fact(d, m, f);
  return m;
}

// A mapping of scalar -> scalar ({"12": "libcublas.so.12"}); empty when the key is absent.
std::map<std::string, std::string> str_map(const YamlDoc& d, const YAML::Node& n, const std::string& key) {
  std::map<std::string, std::string> out;
  const YAML::Node& m = n[key];
  if (!m) return out;
  if (!m.IsMap()) d.fail(m, "expected '" + key + "' to map a major version to a value, found " + describe(m));
  for (const auto& kv : m) {
    if (!kv.second.IsScalar())
      d.fail(kv.second, "expected a value for '" + kv.first.Scalar() + "', found " + describe(kv.second));
    out[kv.first.Scalar()] = kv.second.Scalar();
  }
  return out;
}

// "sm_61,sm_70,compute_86": each item sm_<digits> or compute_<digits>.
bool arch_list(const std::string& s) {
  if (s.empty()) return false;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t digits = item.rfind("sm_", 0) == 0 ? 3 : item.rfind("compute_", 0) == 0 ? 8 : std::string::npos;
    if (digits == std::string::npos || item.size() == digits || item.size() > digits + 3 ||
        item.find_first_not_of("0123456789", digits) != std::string::npos)
      return false;
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

bool iso_date(const std::string& s) {
  auto digits = [&](size_t from, size_t n) { return s.find_first_not_of("0123456789", from) >= from + n; };
  return s.size() == 10 && digits(0, 4) && s[4] == '-' && digits(5, 2) && s[7] == '-' && digits(8, 2);
}

const YAML::Node& seq(const YamlDoc& d, const std::string& key) {
  static YAML::Node holder;
  d.check_keys(d.root(), {key}, "a knowledge-base file");
  holder = d.root()[key];
  if (!holder.IsSequence()) d.fail(holder, "expected '" + key + "' to be a list, found " + describe(holder));
  return holder;
}

// `word` occurs in `s` with no letter or digit right before or after it
// ("l4" is in "nvidia l4" but not in "nvidia l40s").
bool contains_word(const std::string& s, const std::string& word) {
  for (size_t p = s.find(word); p != std::string::npos; p = s.find(word, p + 1)) {
    bool left = p == 0 || !std::isalnum(static_cast<unsigned char>(s[p - 1]));
    size_t e = p + word.size();
    bool right = e == s.size() || !std::isalnum(static_cast<unsigned char>(s[e]));
    if (left && right) return true;
  }
  return false;
}

}  // namespace

bool VersionRange::contains(const Version& v) const {
  auto f = Version::parse(from), t = Version::parse(to);
  if (!f || !t) return false;
  // Compare on the range's precision: "11.8" contains 11.8.0 and 11.8.89.
  Version vf = *Version::parse(v.truncated(f->parts.size()));
  Version vt = *Version::parse(v.truncated(t->parts.size()));
  return *f <= vf && vt <= *t;
}

std::string VersionRange::text() const { return from == to ? from : from + "-" + to; }

const PaddleGpuBuild* PaddleRelease::build_for(std::string_view cuda, std::string_view version) const {
  for (auto& b : gpu)
    if (b.cuda == cuda && (version.empty() || b.versions.empty() ||
                           std::find(b.versions.begin(), b.versions.end(), version) != b.versions.end()))
      return &b;
  return nullptr;
}

bool OsPython::provides(std::string_view py) const {
  auto v = Version::parse(py);
  if (!v) return false;
  std::string k = v->truncated(2);
  return std::find(python.begin(), python.end(), k) != python.end();
}

bool PaddleRelease::has_version(std::string_view v) const {
  return std::find(versions.begin(), versions.end(), v) != versions.end();
}

// One function per KB file; each fills one table of the KnowledgeBase.
struct KbLoader {
  static void version(const YamlDoc& d, KnowledgeBase& kb) {
    d.check_keys(d.root(), {"version", "released", "note"}, "kb.yaml");
    kb.version_ = d.str(d.root(), "version");
    kb.released_ = d.str(d.root(), "released");
    if (!iso_date(kb.released_))
      d.fail(d.root()["released"],
             "expected the day the facts were last checked, YYYY-MM-DD, found '" + kb.released_ + "'");
  }
  static void cuda(const YamlDoc& d, KnowledgeBase& kb) {
    for (const auto& n : seq(d, "cuda")) {
      d.check_keys(n, {"cuda", "min_driver_full", "min_driver_compat", "source", "unconfirmed", "note"},
                   "a CUDA release");
      CudaRelease c;
      read_fact(d, n, c);
      c.cuda = d.version(n, "cuda");
      c.min_driver_full = d.version(n, "min_driver_full", false);  // empty: the toolkit driver is not known
      c.min_driver_compat = d.version(n, "min_driver_compat");
      kb.cudas_.push_back(c);
    }
  }
  static void arch(const YamlDoc& d, KnowledgeBase& kb) {
    for (const auto& n : seq(d, "arch")) {
      d.check_keys(n, {"name", "cc", "first_cuda", "last_cuda", "source", "unconfirmed", "note"}, "an architecture");
      ArchSupport a;
      read_fact(d, n, a);
      a.name = d.str(n, "name");
      for (const auto& c : n["cc"]) a.cc.push_back(d.version_of(c));
      if (a.cc.empty()) d.fail(n, "expected 'cc' to list compute capabilities, found none");
      a.first_cuda = d.version(n, "first_cuda");
      a.last_cuda = d.version(n, "last_cuda", false);
      kb.archs_.push_back(a);
    }
  }
  static void gpus(const YamlDoc& d, KnowledgeBase& kb) {
    for (const auto& n : seq(d, "gpus")) {
      d.check_keys(n,
                   {"name", "aliases", "form", "cc", "memory_gb", "bw_GBps", "fp32_tflops", "fp16_tensor_tflops",
                    "bf16_tensor_tflops", "source", "unconfirmed", "note", "host_cpu"},
                   "a GPU");
      GpuSpec g;
      g.name = d.str(n, "name");
      g.aliases = d.str_list(n, "aliases");
      g.form = d.str(n, "form", false);
      g.cc = d.version(n, "cc");
      g.host_cpu = d.str(n, "host_cpu", false);
      if (!g.host_cpu.empty() && g.host_cpu != "arm64" && g.host_cpu != "amd64")
        d.fail(n["host_cpu"], "expected host_cpu arm64 or amd64, found '" + g.host_cpu + "'");
      g.memory_gb = d.number_or_null(n, "memory_gb");
      g.bw_GBps = d.number_or_null(n, "bw_GBps");
      g.fp32_tflops = d.number_or_null(n, "fp32_tflops");
      g.fp16_tensor_tflops = d.number_or_null(n, "fp16_tensor_tflops");
      g.bf16_tensor_tflops = d.number_or_null(n, "bf16_tensor_tflops");
      Fact f;
      read_fact(d, n, f);
      g.source = f.source;
      g.unconfirmed = f.unconfirmed;
      kb.gpus_.push_back(g);
    }
  }
  static void cudnn(const YamlDoc& d, KnowledgeBase& kb) {
    d.check_keys(d.root(), {"cudnn", "apt"}, "cudnn.yaml");
    for (const auto& n : d.root()["apt"]) {
      d.check_keys(n, {"cudnn", "package", "cuda", "os", "source", "unconfirmed", "note"}, "a cuDNN apt package");
      CudnnApt a;
      read_fact(d, n, a);
      a.cudnn = d.version(n, "cudnn");
      a.package = d.str(n, "package");
      if (a.package.find('=') == std::string::npos || a.package.find_first_of(" ;&|$`\"'") != std::string::npos)
        d.fail(n["package"], "expected a pinned apt package name=version, found '" + a.package + "'");
      for (const auto& r : n["cuda"]) a.cuda.push_back(range_of(d, r));
      a.os = d.str_list(n, "os");
      kb.cudnn_apt_.push_back(a);
    }
    const YAML::Node& rows = d.root()["cudnn"];
    if (!rows.IsSequence()) d.fail(rows, "expected 'cudnn' to be a list, found " + describe(rows));
    for (const auto& n : rows) {
      d.check_keys(n, {"cudnn", "cuda", "source", "unconfirmed", "note"}, "a cuDNN release");
      CudnnSupport c;
      read_fact(d, n, c);
      c.cudnn = range_of(d, n["cudnn"]);
      for (const auto& r : n["cuda"]) c.cuda.push_back(range_of(d, r));
      kb.cudnns_.push_back(c);
    }
  }
  static PaddleGpuBuild gpu_build(const YamlDoc& d, const YAML::Node& n) {
    d.check_keys(n,
                 {"cuda", "cudnn", "trt", "trt_pip", "min_driver", "requirement", "index_url", "pip_cuda_libraries",
                  "compiled_archs", "archs_source", "reported_archs", "versions", "source", "unconfirmed", "note"},
                 "a Paddle GPU build");
    PaddleGpuBuild b;
    b.unconfirmed = d.boolean(n, "unconfirmed", false);
    b.note = d.str(n, "note", false);
    b.source = d.str(n, "source", false);
    b.cuda = d.version(n, "cuda");
    b.cudnn = d.version(n, "cudnn");
    b.trt = d.version(n, "trt", false);
    b.requirement = d.str(n, "requirement");
    b.index_url = d.str(n, "index_url", false);
    b.pip_cuda_libraries = d.boolean(n, "pip_cuda_libraries", false);
    b.compiled_archs = d.str(n, "compiled_archs", false);
    if (!b.compiled_archs.empty() && !arch_list(b.compiled_archs))
      d.fail(n["compiled_archs"],
             "expected GPU architectures like sm_61,sm_86,compute_86, found '" + b.compiled_archs + "'");
    b.archs_source = d.str(n, "archs_source", !b.compiled_archs.empty());
    if (const YAML::Node r = nested_fact(d, n, "reported_archs", "archs", b.reported_archs,
                                         "GPU architectures reported for the build, not read from a wheel",
                                         "reported GPU architectures")) {
      b.reported_archs.archs = d.str(r, "archs");
      if (!arch_list(b.reported_archs.archs))
        d.fail(r["archs"], "expected GPU architectures like sm_61,sm_86, found '" + b.reported_archs.archs + "'");
    }
    if (n["versions"])
      for (const auto& v : n["versions"]) b.versions.push_back(d.version_of(v));
    if (const YAML::Node m = nested_fact(d, n, "min_driver", "driver", b.min_driver, "Paddle's documented driver floor",
                                         "a driver floor"))
      b.min_driver.driver = d.version(m, "driver");
    if (n["trt_pip"]) {
      const YAML::Node& t = n["trt_pip"];
      d.expect_map(t, "trt_pip (TensorRT install spec)");
      d.check_keys(t, {"requirement", "index_url", "cuda_major", "source", "unconfirmed", "note"},
                   "a TensorRT install spec");
      if (b.trt.empty()) d.fail(t, "expected 'trt' (the TensorRT version) beside 'trt_pip', found none");
      read_fact(d, t, b.trt_pip);
      b.trt_pip.requirement = d.str(t, "requirement");
      if (b.trt_pip.requirement.find("==") == std::string::npos)
        d.fail(t["requirement"], "expected a pinned requirement name==version, found '" + b.trt_pip.requirement + "'");
      b.trt_pip.index_url = d.str(t, "index_url", false);
      b.trt_pip.cuda_major = d.str(t, "cuda_major", false);
      if (!b.trt_pip.index_url.empty() && b.trt_pip.index_url.rfind("https://", 0) != 0)
        d.fail(t["index_url"], "expected an https:// index URL, found '" + b.trt_pip.index_url + "'");
    }
    return b;
  }
  static void published(const YamlDoc& d, const YAML::Node& n, PaddleRelease& r) {
    d.check_keys(n, {"tags", "unconfirmed_tags", "source", "unconfirmed", "note"}, "published images");
    read_fact(d, n, r.published_fact);
    r.published = d.str_list(n, "tags");
    r.published_unconfirmed = d.str_list(n, "unconfirmed_tags", false);
  }
  static void paddle(const YamlDoc& d, KnowledgeBase& kb) {
    for (const auto& n : seq(d, "releases")) {
      d.check_keys(n, {"series", "versions", "python", "gpu", "cpu", "published", "source", "unconfirmed", "note"},
                   "a Paddle release");
      PaddleRelease r;
      read_fact(d, n, r);
      r.series = d.str(n, "series");
      for (const auto& v : n["versions"]) r.versions.push_back(d.version_of(v));
      r.python = range_of(d, n["python"]);
      for (const auto& b : n["gpu"]) {
        r.gpu.push_back(gpu_build(d, b));
        if (r.gpu.back().source.empty()) r.gpu.back().source = r.source;
      }
      YAML::Node cpu = n["cpu"];
      d.check_keys(cpu, {"requirement", "index_url", "source", "unconfirmed", "note"}, "a Paddle CPU build");
      read_fact(d, cpu, r.cpu_fact);
      r.cpu_requirement = d.str(cpu, "requirement");
      r.cpu_index_url = d.str(cpu, "index_url", false);
      if (n["published"]) published(d, n["published"], r);
      kb.paddles_.push_back(r);
    }
  }
  static void python(const YamlDoc& d, KnowledgeBase& kb) {
    for (const auto& n : seq(d, "python")) {
      d.check_keys(n, {"python", "released", "eol", "source", "unconfirmed", "note"}, "a Python release");
      PythonEol p;
      read_fact(d, n, p);
      p.python = d.version(n, "python");
      p.eol = d.str(n, "eol");
      if (p.eol.size() != 10 || p.eol[4] != '-' || p.eol[7] != '-')
        d.fail(n["eol"], "expected an ISO date like 2026-10-31, found '" + p.eol + "'");
      kb.pythons_.push_back(p);
    }
  }
  static void os(const YamlDoc& d, KnowledgeBase& kb) {
    for (const auto& n : seq(d, "os")) {
      d.check_keys(n, {"os", "name", "python", "default_python", "source", "unconfirmed", "note"}, "an OS");
      OsPython o;
      read_fact(d, n, o);
      o.os = d.str(n, "os");
      o.name = d.str(n, "name", false);
      if (o.name.empty()) o.name = o.os;
      for (const auto& p : n["python"]) o.python.push_back(d.version_of(p));
      if (o.python.empty()) d.fail(n, "expected 'python' to list the Python versions the OS packages, found none");
      o.default_python = d.version(n, "default_python", false);
      kb.os_pythons_.push_back(o);
    }
  }
  static NvidiaLibrary library(const YamlDoc& d, const YAML::Node& n) {
    d.check_keys(n, {"lib", "keyed_by", "sonames", "packages", "wheel_dirs", "source", "unconfirmed", "note"},
                 "an NVIDIA library");
    NvidiaLibrary l;
    read_fact(d, n, l);
    l.lib = d.str(n, "lib");
    l.keyed_by = d.str(n, "keyed_by", false);
    if (l.keyed_by.empty()) l.keyed_by = "cuda";
    if (l.keyed_by != "cuda" && l.keyed_by != "cudnn" && l.keyed_by != "tensorrt")
      d.fail(n["keyed_by"], "expected cuda, cudnn or tensorrt, found '" + l.keyed_by + "'");
    l.sonames = str_map(d, n, "sonames");
    if (l.sonames.empty()) d.fail(n, "expected 'sonames' per major version, found none");
    for (const auto& [major, so] : l.sonames)
      if (so.rfind("lib", 0) != 0 || so.find(".so") == std::string::npos || so.find('/') != std::string::npos)
        d.fail(n["sonames"], "expected a soname like libcublas.so.12 for major " + major + ", found '" + so + "'");
    l.packages = str_map(d, n, "packages");
    l.wheel_dirs = str_map(d, n, "wheel_dirs");
    return l;
  }
  static PaddleLoads loads(const YamlDoc& d, const YAML::Node& n, const KnowledgeBase& kb) {
    d.check_keys(n,
                 {"paddle", "pip_cuda_libraries", "dlopen", "unversioned", "pip_provides", "extra_dirs", "libs",
                  "source", "unconfirmed", "note"},
                 "a Paddle load table");
    PaddleLoads p;
    read_fact(d, n, p);
    p.paddle = range_of(d, n["paddle"]);
    p.pip_cuda_libraries = d.boolean(n, "pip_cuda_libraries", false);
    p.dlopen = d.str(n, "dlopen");
    if (p.dlopen != "unversioned" && p.dlopen != "soname")
      d.fail(n["dlopen"], "expected unversioned or soname, found '" + p.dlopen + "'");
    p.unversioned = d.str_list(n, "unversioned", false);
    p.pip_provides = d.str_list(n, "pip_provides", false);
    for (const auto& lib : p.pip_provides)
      if (!kb.library(lib))
        d.fail(n["pip_provides"], "expected libraries of the 'libraries' list in pip_provides, found '" + lib + "'");
    if (const YAML::Node& x = n["extra_dirs"]) {
      d.expect_map(x, "extra_dirs (library -> folders)");
      for (const auto& kv : x) p.extra_dirs[kv.first.Scalar()] = d.str_list(x, kv.first.Scalar());
    }
    for (const auto& l : n["libs"]) {
      d.check_keys(l, {"lib", "need", "feature"}, "a library Paddle loads");
      PaddleLoad pl{d.str(l, "lib"), d.str(l, "need"), d.str(l, "feature")};
      if (pl.need != "required" && pl.need != "feature")
        d.fail(l["need"], "expected required or feature, found '" + pl.need + "'");
      if (!kb.library(pl.lib)) d.fail(l["lib"], "expected a library of the 'libraries' list, found '" + pl.lib + "'");
      p.libs.push_back(pl);
    }
    if (p.libs.empty()) d.fail(n, "expected 'libs' to list the libraries Paddle loads, found none");
    return p;
  }
  static void libraries(const YamlDoc& d, KnowledgeBase& kb) {
    d.check_keys(d.root(), {"libraries", "runtime_sets", "paddle_loads"}, "libraries.yaml");
    for (const auto& n : d.root()["libraries"]) kb.libraries_.push_back(library(d, n));
    for (const auto& n : d.root()["runtime_sets"]) {
      d.check_keys(n, {"cuda_major", "libs", "source", "unconfirmed", "note"}, "a runtime library set");
      RuntimeSet r;
      read_fact(d, n, r);
      r.cuda_major = d.str(n, "cuda_major");
      r.libs = d.str_list(n, "libs");
      for (size_t i = 0; i < r.libs.size(); ++i)
        if (!kb.library(r.libs[i]))
          d.fail(n["libs"][i], "expected a library of the 'libraries' list, found '" + r.libs[i] + "'");
      kb.runtime_sets_.push_back(r);
    }
    for (const auto& n : d.root()["paddle_loads"]) kb.paddle_loads_.push_back(loads(d, n, kb));
  }
  static void cuda_wheels(const YamlDoc& d, KnowledgeBase& kb) {
    d.check_keys(d.root(), {"cuda_wheels", "not_pinned"}, "cuda_wheels.yaml");
    const YAML::Node& bases = d.root()["cuda_wheels"];
    if (!bases.IsSequence()) d.fail(bases, "expected 'cuda_wheels' to be a list, found " + describe(bases));
    for (const auto& n : bases) {
      d.check_keys(n, {"cuda", "cuda_full", "cudnn", "wheels", "source", "unconfirmed", "note"}, "a CUDA wheel base");
      CudaWheelBase b;
      read_fact(d, n, b);
      b.cuda = d.version(n, "cuda");
      b.cuda_full = d.version(n, "cuda_full");
      b.cudnn = d.version(n, "cudnn");
      for (const auto& w : n["wheels"]) {
        d.check_keys(w, {"package", "version", "provides"}, "a pinned wheel");
        b.wheels.push_back({d.str(w, "package"), d.version(w, "version"), d.str_list(w, "provides")});
      }
      if (b.wheels.empty()) d.fail(n, "expected 'wheels' to list the pinned wheels, found none");
      kb.cuda_wheels_.push_back(b);
    }
    for (const auto& n : d.root()["not_pinned"]) kb.unpinned_wheels_.push_back(unpinned(d, n, kb));
  }
  // A `not_pinned` row: a package some base pins, a version newer than its newest pin.
  static UnpinnedWheel unpinned(const YamlDoc& d, const YAML::Node& n, const KnowledgeBase& kb) {
    d.check_keys(n, {"package", "version", "date", "source", "unconfirmed", "note"}, "a release no base pins");
    UnpinnedWheel u;
    read_fact(d, n, u);
    u.package = d.str(n, "package");
    u.version = d.version(n, "version");
    u.date = d.str(n, "date");
    if (!iso_date(u.date)) d.fail(n["date"], "expected the version's upload day, YYYY-MM-DD, found '" + u.date + "'");
    std::string pin = kb.newest_pin(u.package);
    if (pin.empty()) d.fail(n["package"], "expected a package a base in 'cuda_wheels' pins, found '" + u.package + "'");
    if (*Version::parse(u.version) <= *Version::parse(pin))
      d.fail(n["version"], "expected a version newer than the newest pin " + pin + ", found '" + u.version +
                               "' (a pinned version needs no row here)");
    return u;
  }
  static void tensorrt(const YamlDoc& d, KnowledgeBase& kb) {
    for (const auto& n : seq(d, "tensorrt")) {
      d.check_keys(n, {"trt", "cuda", "source", "unconfirmed", "note"}, "a TensorRT release");
      TensorRtSupport t;
      read_fact(d, n, t);
      t.trt = range_of(d, n["trt"]);
      for (const auto& r : n["cuda"]) t.cuda.push_back(range_of(d, r));
      kb.tensorrt_.push_back(t);
    }
  }
  static void images(const YamlDoc& d, KnowledgeBase& kb) {
    d.check_keys(d.root(), {"nvidia_cuda", "cpu_bases"}, "images.yaml");
    for (const auto& n : d.root()["nvidia_cuda"]) {
      d.check_keys(n, {"cuda", "full", "cudnn_tag", "cudnn_shipped", "os", "source", "unconfirmed", "note"},
                   "nvidia/cuda images");
      CudaImages c;
      read_fact(d, n, c);
      c.cuda = d.version(n, "cuda");
      c.full = d.version(n, "full");
      c.cudnn_tag = d.str(n, "cudnn_tag");
      c.cudnn_shipped = d.version(n, "cudnn_shipped", false);
      c.os = d.str_list(n, "os");
      kb.images_.push_back(c);
    }
    for (const auto& n : d.root()["cpu_bases"]) {
      d.check_keys(n, {"os", "image", "source", "unconfirmed", "note"}, "a CPU base image");
      CpuBase b;
      read_fact(d, n, b);
      b.os = d.str(n, "os");
      b.image = d.str(n, "image");
      kb.cpu_bases_.push_back(b);
    }
  }
};

namespace {

using FileLoader = std::function<void(const YamlDoc&, KnowledgeBase&)>;
// The KB files, in the order they are hashed into version().
const std::vector<std::pair<std::string, FileLoader>>& kb_files() {
  static const std::vector<std::pair<std::string, FileLoader>> files = {
      {"kb.yaml", KbLoader::version},
      {"cuda.yaml", KbLoader::cuda},
      {"arch.yaml", KbLoader::arch},
      {"gpus.yaml", KbLoader::gpus},
      {"cudnn.yaml", KbLoader::cudnn},
      {"paddle.yaml", KbLoader::paddle},
      {"python.yaml", KbLoader::python},
      {"images.yaml", KbLoader::images},
      {"os.yaml", KbLoader::os},
      {"libraries.yaml", KbLoader::libraries},
      {"cuda_wheels.yaml", KbLoader::cuda_wheels},
      {"tensorrt.yaml", KbLoader::tensorrt},
  };
  return files;
}

}  // namespace

KnowledgeBase KnowledgeBase::load(const std::string& dir) {
  KnowledgeBase kb;
  kb.dir_ = dir;
  Sha256 h;
  for (const auto& [name, loader] : kb_files()) {
    std::string path = dir + "/" + name;
    if (!std::filesystem::exists(path)) throw InputError(path + ": expected a knowledge-base file, found none");
    std::string text = read_file(path);
    h.update(name);
    h.update(text);
    loader(YamlDoc::parse(text, path), kb);
  }
  kb.version_ += "+sha256:" + h.hex().substr(0, 12);
  return kb;
}

KnowledgeBase KnowledgeBase::load_default() { return load(data_dir() + "/matrix/kb"); }

namespace {
// The memory size a lowercased query names, as ([0-9]+)\s*gb?\b found it: the first run of
// digits followed by "g" or "gb" as a word's end. Written out (std::regex recursed once per
// character of a long query) and bounded (a run of more than 6 digits names no GPU).
std::optional<int> memory_gb(std::string_view lq) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  auto word_ends = [&](size_t at) {
    return at >= lq.size() || !(std::isalnum(static_cast<unsigned char>(lq[at])) || lq[at] == '_');
  };
  for (size_t i = 0; i < lq.size();) {
    if (!digit(lq[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < lq.size() && digit(lq[end])) ++end;
    size_t g = end;
    while (g < lq.size() && std::isspace(static_cast<unsigned char>(lq[g]))) ++g;
    bool named = g < lq.size() && lq[g] == 'g' && word_ends(g + 1 < lq.size() && lq[g + 1] == 'b' ? g + 2 : g + 1);
    if (named) return end - i > 6 ? std::nullopt : std::optional<int>(std::stoi(std::string(lq.substr(i, end - i))));
    i = end;
  }
  return std::nullopt;
}

// Narrows candidates by a memory size ("40GB", "80 GB") and form factor word in the query.
std::vector<const GpuSpec*> narrow(std::vector<const GpuSpec*> c, const std::string& lq) {
  auto keep = [&](auto pred) {
    std::vector<const GpuSpec*> k;
    for (auto* g : c)
      if (pred(*g)) k.push_back(g);
    if (!k.empty()) c = k;
  };
  if (auto gb = c.size() > 1 ? memory_gb(lq) : std::nullopt)
    keep([&](const GpuSpec& g) { return int(g.memory_gb + 0.5) == *gb; });
  if (c.size() > 1)
    keep([&](const GpuSpec& g) {
      std::string f = strings::lower(g.form), base = f.substr(0, 3);  // "sxm4" also answers to "sxm"
      return !f.empty() && (contains_word(lq, f) || (base == "sxm" && contains_word(lq, base)));
    });
  return c;
}
}  // namespace

std::vector<const GpuSpec*> KnowledgeBase::find_gpus(std::string_view q) const {
  std::string lq = strings::lower(q);
  for (auto& g : gpus_)
    if (strings::lower(g.name) == lq) return {&g};
  // Aliases: equal to the query, or contained in it as a whole word; the longest wins.
  std::vector<const GpuSpec*> best;
  size_t best_len = 0;
  for (auto& g : gpus_)
    for (auto& a : g.aliases) {
      if (strings::lower(a) != lq && !contains_word(lq, strings::lower(a))) continue;
      if (a.size() > best_len) best.clear(), best_len = a.size();
      if (a.size() == best_len && std::find(best.begin(), best.end(), &g) == best.end()) best.push_back(&g);
    }
  return narrow(best, lq);
}

const GpuSpec* KnowledgeBase::find_gpu(std::string_view q) const {
  auto c = find_gpus(q);
  return c.size() == 1 ? c.front() : nullptr;
}

namespace {
template <class T, class F>
const T* find_if_ptr(const std::vector<T>& v, F pred) {
  auto it = std::find_if(v.begin(), v.end(), pred);
  return it == v.end() ? nullptr : &*it;
}
std::string major_minor(std::string_view s) {
  auto v = Version::parse(s);
  return v ? v->truncated(2) : std::string(s);
}
}  // namespace

const CudaRelease* KnowledgeBase::cuda(std::string_view mm) const {
  std::string k = major_minor(mm);
  return find_if_ptr(cudas_, [&](auto& c) { return c.cuda == k; });
}

const PaddleRelease* KnowledgeBase::paddle_release(std::string_view v) const {
  return find_if_ptr(paddles_, [&](auto& r) { return r.has_version(v); });
}

const PythonEol* KnowledgeBase::python_eol(std::string_view py) const {
  std::string k = major_minor(py);
  return find_if_ptr(pythons_, [&](auto& p) { return p.python == k; });
}

const CudaImages* KnowledgeBase::cuda_images(std::string_view mm) const {
  std::string k = major_minor(mm);
  return find_if_ptr(images_, [&](auto& c) { return c.cuda == k; });
}

const CpuBase* KnowledgeBase::cpu_base(std::string_view os) const {
  return find_if_ptr(cpu_bases_, [&](auto& b) { return b.os == os; });
}

const OsPython* KnowledgeBase::os_python(std::string_view os) const {
  return find_if_ptr(os_pythons_, [&](auto& o) { return o.os == os; });
}

const ArchSupport* KnowledgeBase::arch_for_cc(std::string_view cc) const {
  return find_if_ptr(archs_, [&](auto& a) { return std::find(a.cc.begin(), a.cc.end(), cc) != a.cc.end(); });
}

std::string NvidiaLibrary::soname(std::string_view major) const {
  auto it = sonames.find(std::string(major));
  return it == sonames.end() ? "" : it->second;
}

std::string NvidiaLibrary::unversioned() const {
  std::string any = sonames.begin()->second;
  return any.substr(0, any.find(".so") + 3);
}

std::string CudaWheelBase::image() const {
  return "imgtool-base/cuda:" + cuda + "-cudnn" + cudnn.substr(0, cudnn.find('.')) + "-runtime-bookworm";
}

const CudaWheel* CudaWheelBase::wheel_providing(std::string_view soname) const {
  for (const auto& w : wheels)
    if (std::find(w.provides.begin(), w.provides.end(), soname) != w.provides.end()) return &w;
  return nullptr;
}

const NvidiaLibrary* KnowledgeBase::library(std::string_view lib) const {
  return find_if_ptr(libraries_, [&](auto& l) { return l.lib == lib; });
}

const RuntimeSet* KnowledgeBase::runtime_set(std::string_view major) const {
  return find_if_ptr(runtime_sets_, [&](auto& r) { return r.cuda_major == major; });
}

const PaddleLoads* KnowledgeBase::paddle_loads(std::string_view version, bool pip) const {
  auto v = Version::parse(version);
  if (!v) return nullptr;
  return find_if_ptr(paddle_loads_, [&](auto& p) { return p.pip_cuda_libraries == pip && p.paddle.contains(*v); });
}

std::string KnowledgeBase::newest_pin(std::string_view package) const {
  std::optional<Version> best;
  for (const auto& b : cuda_wheels_)
    for (const auto& w : b.wheels)
      if (w.package == package)
        if (auto v = Version::parse(w.version); v && (!best || *best < *v)) best = v;
  return best ? best->text : "";
}

const UnpinnedWheel* KnowledgeBase::unpinned_wheel(std::string_view package) const {
  return find_if_ptr(unpinned_wheels_, [&](auto& u) { return u.package == package; });
}

const CudaWheelBase* KnowledgeBase::cuda_wheels(std::string_view mm) const {
  std::string k = major_minor(mm);
  return find_if_ptr(cuda_wheels_, [&](auto& b) { return b.cuda == k; });
}

const CudnnApt* KnowledgeBase::cudnn_apt(std::string_view cudnn, std::string_view cuda, std::string_view os) const {
  auto want = Version::parse(cudnn), c = Version::parse(cuda);
  if (!want || !c) return nullptr;
  return find_if_ptr(cudnn_apt_, [&](auto& a) {
    bool same = want->is_prefix_of(*Version::parse(a.cudnn));
    bool for_cuda = std::any_of(a.cuda.begin(), a.cuda.end(), [&](auto& r) { return r.contains(*c); });
    return same && for_cuda && std::find(a.os.begin(), a.os.end(), os) != a.os.end();
  });
}

std::vector<const TensorRtSupport*> KnowledgeBase::tensorrt_facts(std::string_view trt) const {
  std::vector<const TensorRtSupport*> out;
  auto v = Version::parse(trt);
  if (!v) return out;
  for (auto& t : tensorrt_) {
    auto f = Version::parse(t.trt.from), to = Version::parse(t.trt.to);
    size_t n = v->parts.size();
    if (*Version::parse(f->truncated(n)) <= *v && *v <= *Version::parse(to->truncated(n))) out.push_back(&t);
  }
  return out;
}

std::vector<const CudnnSupport*> KnowledgeBase::cudnn_facts(std::string_view cudnn) const {
  std::vector<const CudnnSupport*> out;
  auto v = Version::parse(cudnn);
  if (!v) return out;
  for (auto& c : cudnns_) {
    // Overlap on the query's precision: "8.9" overlaps 8.9.0-8.9.1.
    auto f = Version::parse(c.cudnn.from), t = Version::parse(c.cudnn.to);
    size_t n = v->parts.size();
    if (*Version::parse(f->truncated(n)) <= *v && *v <= *Version::parse(t->truncated(n))) out.push_back(&c);
  }
  return out;
}

}  // namespace imgtool::matrix
