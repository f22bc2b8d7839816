#include "run/yaml_text.h"

#include <regex>

namespace imgtool::runconf {
namespace {

// !!str (str_node) or "!" (how yaml-cpp reads back a quoted scalar, e.g. a rendered Job that
// emit/ loads to extend): either way a string that must stay quoted.
bool is_string_tag(const std::string& tag) { return tag == "tag:yaml.org,2002:str" || tag == "!"; }

void put(YAML::Emitter& e, const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      if (n.size() == 0) {
        e << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      e << YAML::BeginMap;
      for (auto kv : n) {
        e << YAML::Key << kv.first.Scalar() << YAML::Value;
        put(e, kv.second);
      }
      e << YAML::EndMap;
      return;
    case YAML::NodeType::Sequence:
      e << YAML::BeginSeq;
      for (auto item : n) put(e, item);
      e << YAML::EndSeq;
      return;
    default: {
      const std::string& s = n.Scalar();
      if (s.find('\n') != std::string::npos)
        e << YAML::Literal << s;
      else if (is_string_tag(n.Tag()))
        e << YAML::DoubleQuoted << s;
      else
        e << s;
    }
  }
}

}  // namespace

YAML::Node str_node(const std::string& v) {
  static const std::regex typed(
      R"(^(|~|null|true|false|yes|no|on|off|y|n|[-+]?[0-9][0-9_]*(\.[0-9]*)?([eE][-+]?[0-9]+)?|[-+]?\.[0-9]+)$)",
      std::regex::icase);
  YAML::Node n(v);
  if (std::regex_match(v, typed)) n.SetTag("tag:yaml.org,2002:str");
  return n;
}

YAML::Node str_seq(const std::vector<std::string>& items) {
  YAML::Node n(YAML::NodeType::Sequence);
  for (auto& i : items) n.push_back(str_node(i));
  return n;
}

std::string to_yaml(const YAML::Node& root, const std::vector<std::string>& header) {
  std::string out;
  for (auto& h : header) out += "# " + h + "\n";
  YAML::Emitter e;
  e.SetIndent(2);
  e.SetSeqFormat(YAML::Block);
  put(e, root);
  return out + e.c_str() + "\n";
}

}  // namespace imgtool::runconf
