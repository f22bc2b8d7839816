// emit/'s names for the shared YAML writer (run/yaml_text.h): str() and seq() keep a string a
// string, to_yaml() writes the tree in insertion order.
#pragma once
#include "run/yaml_text.h"

namespace imgtool::emit {

inline YAML::Node str(const std::string& s) { return runconf::str_node(s); }
inline YAML::Node seq(const std::vector<std::string>& items) { return runconf::str_seq(items); }
using runconf::to_yaml;

}  // namespace imgtool::emit
