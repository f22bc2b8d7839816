#include "emit/yaml_out.h"

#include "run/yaml_scalar.h"

namespace imgtool::emit {
namespace {

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
      if (s.find('\n') != std::string::npos) e << YAML::Literal << s;
      else if (n.Tag() == "tag:yaml.org,2002:str") e << YAML::DoubleQuoted << s;
      else e << s;
    }
  }
}

}  // namespace

YAML::Node str(const std::string& s) { return runconf::str_node(s); }

YAML::Node seq(const std::vector<std::string>& items) {
  YAML::Node n(YAML::NodeType::Sequence);
  for (auto& i : items) n.push_back(str(i));
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

}  // namespace imgtool::emit
