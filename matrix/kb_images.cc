// The knowledge base, one fact family: base images: nvidia/cuda tags and CPU bases (images.yaml), the CUDA bases made
// from NVIDIA's wheels and the releases no base pins yet (cuda_wheels.yaml). Its readers (KbLoader, matrix/kb_read.h)
// and its queries (KnowledgeBase, matrix/kb.h).
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

void KbLoader::images(const YamlDoc& d, KnowledgeBase& kb) {
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

void KbLoader::cuda_wheels(const YamlDoc& d, KnowledgeBase& kb) {
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
UnpinnedWheel KbLoader::unpinned(const YamlDoc& d, const YAML::Node& n, const KnowledgeBase& kb) {
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

std::string CudaWheelBase::image() const {
  return "imgtool-base/cuda:" + cuda + "-cudnn" + cudnn.substr(0, cudnn.find('.')) + "-runtime-bookworm";
}

const CudaWheel* CudaWheelBase::wheel_providing(std::string_view soname) const {
  for (const auto& w : wheels)
    if (std::find(w.provides.begin(), w.provides.end(), soname) != w.provides.end()) return &w;
  return nullptr;
}

const CudaImages* KnowledgeBase::cuda_images(std::string_view mm) const {
  std::string k = major_minor(mm);
  return find_if_ptr(images_, [&](auto& c) { return c.cuda == k; });
}

const CpuBase* KnowledgeBase::cpu_base(std::string_view os) const {
  return find_if_ptr(cpu_bases_, [&](auto& b) { return b.os == os; });
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

}  // namespace imgtool::matrix
