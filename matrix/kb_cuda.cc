// The knowledge base, one fact family: CUDA and its driver floors (cuda.yaml), cuDNN (cudnn.yaml) and TensorRT
// (tensorrt.yaml). Its readers (KbLoader, matrix/kb_read.h) and its queries (KnowledgeBase, matrix/kb.h).
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

void KbLoader::cuda(const YamlDoc& d, KnowledgeBase& kb) {
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

void KbLoader::cudnn(const YamlDoc& d, KnowledgeBase& kb) {
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

void KbLoader::tensorrt(const YamlDoc& d, KnowledgeBase& kb) {
  for (const auto& n : seq(d, "tensorrt")) {
    d.check_keys(n, {"trt", "cuda", "source", "unconfirmed", "note"}, "a TensorRT release");
    TensorRtSupport t;
    read_fact(d, n, t);
    t.trt = range_of(d, n["trt"]);
    for (const auto& r : n["cuda"]) t.cuda.push_back(range_of(d, r));
    kb.tensorrt_.push_back(t);
  }
}

const CudaRelease* KnowledgeBase::cuda(std::string_view mm) const {
  std::string k = major_minor(mm);
  return find_if_ptr(cudas_, [&](auto& c) { return c.cuda == k; });
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
