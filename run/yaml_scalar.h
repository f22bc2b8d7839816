// One YAML string scalar for every renderer (compose, Kubernetes).
#pragma once
#include <regex>
#include <string>

#include <yaml-cpp/yaml.h>

namespace imgtool::runconf {

// A string scalar that YAML would otherwise read as a bool/number/null ("true", "1")
// carries the !!str tag, so compose and Kubernetes see the string it is.
inline YAML::Node str_node(const std::string& v) {
  static const std::regex typed(
      R"(^(|~|null|true|false|yes|no|on|off|y|n|[-+]?[0-9][0-9_]*(\.[0-9]*)?([eE][-+]?[0-9]+)?|[-+]?\.[0-9]+)$)",
      std::regex::icase);
  YAML::Node n(v);
  if (std::regex_match(v, typed)) n.SetTag("tag:yaml.org,2002:str");
  return n;
}

}  // namespace imgtool::runconf
