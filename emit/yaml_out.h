// YAML text for the CI files emit/ writes: a YAML::Node tree, emitted in
// insertion order (deterministic), multi-line strings as literal blocks
// (`run: |`), strings YAML would read as another type ("1/4" is fine, "true",
// "1" are not) double-quoted, empty maps as `{}`.
#pragma once
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace imgtool::emit {

// A string scalar that stays a string (runconf::str_node: tagged when YAML would retype it).
YAML::Node str(const std::string& s);
YAML::Node seq(const std::vector<std::string>& items);

// `header` lines become "# …" comments above the document.
std::string to_yaml(const YAML::Node& root, const std::vector<std::string>& header = {});

}  // namespace imgtool::emit
