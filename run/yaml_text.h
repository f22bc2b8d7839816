// YAML text for every file imgtool renders (compose, Kubernetes, CI matrices, smoke Jobs): a
// YAML::Node tree emitted in insertion order (deterministic), multi-line strings as literal
// blocks (`run: |`), strings YAML would read as another type ("true", "1", "null"; "1/4" is
// fine) double-quoted, empty maps as `{}`. Never yaml-cpp's `!<tag:yaml.org,2002:str>` form.
#pragma once
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace imgtool::runconf {

// A string scalar that stays a string: tagged !!str when YAML would retype it, which
// to_yaml() writes as a double-quoted scalar.
YAML::Node str_node(const std::string& v);
YAML::Node str_seq(const std::vector<std::string>& items);

// `header` lines become "# …" comments above the document.
std::string to_yaml(const YAML::Node& root, const std::vector<std::string>& header = {});

}  // namespace imgtool::runconf
