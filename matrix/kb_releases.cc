// The knowledge base, one fact family: Paddle releases (paddle.yaml), Python end-of-life (python.yaml) and the Pythons
// each OS ships (os.yaml). Its readers (KbLoader, matrix/kb_read.h) and its queries (KnowledgeBase, matrix/kb.h).
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/strings.h"
#include "matrix/kb.h"
#include "matrix/kb_read.h"
#include "matrix/yaml_doc.h"

namespace imgtool::matrix {

using namespace kb_read;

PaddleGpuBuild KbLoader::gpu_build(const YamlDoc& d, const YAML::Node& n) {
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
  if (const YAML::Node m =
          nested_fact(d, n, "min_driver", "driver", b.min_driver, "Paddle's documented driver floor", "a driver floor"))
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

void KbLoader::published(const YamlDoc& d, const YAML::Node& n, PaddleRelease& r) {
  d.check_keys(n, {"tags", "unconfirmed_tags", "source", "unconfirmed", "note"}, "published images");
  read_fact(d, n, r.published_fact);
  r.published = d.str_list(n, "tags");
  r.published_unconfirmed = d.str_list(n, "unconfirmed_tags", false);
}

void KbLoader::paddle(const YamlDoc& d, KnowledgeBase& kb) {
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

void KbLoader::python(const YamlDoc& d, KnowledgeBase& kb) {
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

void KbLoader::os(const YamlDoc& d, KnowledgeBase& kb) {
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

const PaddleRelease* KnowledgeBase::paddle_release(std::string_view v) const {
  return find_if_ptr(paddles_, [&](auto& r) { return r.has_version(v); });
}

const PythonEol* KnowledgeBase::python_eol(std::string_view py) const {
  std::string k = major_minor(py);
  return find_if_ptr(pythons_, [&](auto& p) { return p.python == k; });
}

const OsPython* KnowledgeBase::os_python(std::string_view os) const {
  return find_if_ptr(os_pythons_, [&](auto& o) { return o.os == os; });
}

}  // namespace imgtool::matrix
