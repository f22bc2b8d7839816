// Reading the knowledge base's YAML files (matrix/kb/*.yaml), for the files that read one fact family
// each (kb_releases.cc, kb_cuda.cc, kb_libraries.cc, kb_archs.cc, kb_images.cc; kb.cc loads them all):
// the helpers they share (kb_read::) and KbLoader, the one friend of KnowledgeBase, one static
// function per file or table. Internal to matrix/: nothing outside it includes this.
#pragma once
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/version.h"
#include "matrix/kb.h"
#include "matrix/yaml_doc.h"

namespace imgtool::matrix {

namespace kb_read {

// "11.0-11.8" or "12.6" -> VersionRange; checked against the doc position.
VersionRange range_of(const YamlDoc& d, const YAML::Node& n);
// source (required, non-empty), unconfirmed, note: common to every fact.
void read_fact(const YamlDoc& d, const YAML::Node& n, Fact& f);
// A fact nested under `key` (min_driver, reported_archs): a map of `value` beside source/unconfirmed/
// note, its Fact fields read into `f`; the node (null when `key` is absent) for the caller's value.
YAML::Node nested_fact(const YamlDoc& d, const YAML::Node& n, const std::string& key, const std::string& value, Fact& f,
                       const std::string& what, const std::string& kind);
// A mapping of scalar -> scalar ({"12": "libcublas.so.12"}); empty when the key is absent.
std::map<std::string, std::string> str_map(const YamlDoc& d, const YAML::Node& n, const std::string& key);
// "sm_61,sm_70,compute_86": each item sm_<digits> or compute_<digits>.
bool arch_list(const std::string& s);
bool iso_date(const std::string& s);
const YAML::Node& seq(const YamlDoc& d, const std::string& key);
// `word` occurs in `s` with no letter or digit right before or after it
// ("l4" is in "nvidia l4" but not in "nvidia l40s").
bool contains_word(const std::string& s, const std::string& word);

template <class T, class F>
const T* find_if_ptr(const std::vector<T>& v, F pred) {
  auto it = std::find_if(v.begin(), v.end(), pred);
  return it == v.end() ? nullptr : &*it;
}
// "12.6.3" -> "12.6"; what is not a version stays as it is.
inline std::string major_minor(std::string_view s) {
  auto v = Version::parse(s);
  return v ? v->truncated(2) : std::string(s);
}

}  // namespace kb_read

// One function per KB file or table; each fills one table of the KnowledgeBase.
struct KbLoader {
  static void version(const YamlDoc& d, KnowledgeBase& kb);
  static PaddleGpuBuild gpu_build(const YamlDoc& d, const YAML::Node& n);
  static void published(const YamlDoc& d, const YAML::Node& n, PaddleRelease& r);
  static void paddle(const YamlDoc& d, KnowledgeBase& kb);
  static void python(const YamlDoc& d, KnowledgeBase& kb);
  static void os(const YamlDoc& d, KnowledgeBase& kb);
  static void cuda(const YamlDoc& d, KnowledgeBase& kb);
  static void cudnn(const YamlDoc& d, KnowledgeBase& kb);
  static void tensorrt(const YamlDoc& d, KnowledgeBase& kb);
  static NvidiaLibrary library(const YamlDoc& d, const YAML::Node& n);
  static PaddleLoads loads(const YamlDoc& d, const YAML::Node& n, const KnowledgeBase& kb);
  static void libraries(const YamlDoc& d, KnowledgeBase& kb);
  static void arch(const YamlDoc& d, KnowledgeBase& kb);
  static void gpus(const YamlDoc& d, KnowledgeBase& kb);
  static void images(const YamlDoc& d, KnowledgeBase& kb);
  static void cuda_wheels(const YamlDoc& d, KnowledgeBase& kb);
  static UnpinnedWheel unpinned(const YamlDoc& d, const YAML::Node& n, const KnowledgeBase& kb);
};

}  // namespace imgtool::matrix
