// The knowledge base, one fact family: the NVIDIA libraries, the runtime sets and what each Paddle line loads
// (libraries.yaml). Its readers (KbLoader, matrix/kb_read.h) and its queries (KnowledgeBase, matrix/kb.h).
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

NvidiaLibrary KbLoader::library(const YamlDoc& d, const YAML::Node& n) {
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

PaddleLoads KbLoader::loads(const YamlDoc& d, const YAML::Node& n, const KnowledgeBase& kb) {
  d.check_keys(n,
               {"paddle", "pip_cuda_libraries", "dlopen", "unversioned", "pip_provides", "extra_dirs", "libs", "source",
                "unconfirmed", "note"},
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

void KbLoader::libraries(const YamlDoc& d, KnowledgeBase& kb) {
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

std::string NvidiaLibrary::soname(std::string_view version) const {
  auto it = sonames.find(std::string(version));
  if (it == sonames.end()) it = sonames.find(std::string(version.substr(0, version.find('.'))));
  return it == sonames.end() ? "" : it->second;
}

std::string NvidiaLibrary::unversioned() const {
  std::string any = sonames.begin()->second;  // "11" before "12.9": the oldest major's name
  return any.substr(0, any.find(".so") + 3);
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

}  // namespace imgtool::matrix
