#include "matrix/tag_template.h"

#include <set>

namespace imgtool::matrix {

namespace {

const std::set<std::string> kPlaceholders = {"paddle", "variant", "cuda", "cudnn",  "trt",
                                             "python", "py",      "os",   "flavor", "dev"};

std::string known_list() {
  std::string s;
  for (auto& p : kPlaceholders) s += (s.empty() ? "" : ", ") + p;
  return s;
}

// Renders text without '[' groups; sets `all_set` false if a placeholder is empty.
std::string render_flat(const std::string& t, const std::map<std::string, std::string>& v, bool& all_set) {
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '{') {
      out += t[i];
      continue;
    }
    size_t end = t.find('}', i);
    auto it = v.find(t.substr(i + 1, end - i - 1));
    std::string val = it == v.end() ? "" : it->second;
    if (val.empty()) all_set = false;
    out += val;
    i = end;
  }
  return out;
}

}  // namespace

std::optional<std::string> check_tag_template(const std::string& t) {
  if (t.empty()) return "an empty template";
  bool in_group = false;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (c == '[' || c == ']') {
      if ((c == '[') == in_group) return std::string("unbalanced '") + c + "' at offset " + std::to_string(i);
      in_group = !in_group;
    } else if (c == '{') {
      size_t end = t.find('}', i);
      if (end == std::string::npos) return "an unclosed '{' at offset " + std::to_string(i);
      std::string name = t.substr(i + 1, end - i - 1);
      if (!kPlaceholders.count(name)) return "unknown placeholder '{" + name + "}' (known: " + known_list() + ")";
      i = end;
    } else if (c == '}') {
      return "a stray '}' at offset " + std::to_string(i);
    }
  }
  if (in_group) return std::string("unbalanced '['");
  return std::nullopt;
}

std::string render_tag(const std::string& t, const std::map<std::string, std::string>& v) {
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '[') {
      size_t next = t.find('[', i);
      std::string part = t.substr(i, next == std::string::npos ? std::string::npos : next - i);
      bool all_set = true;
      out += render_flat(part, v, all_set);
      if (next == std::string::npos) break;
      i = next - 1;
      continue;
    }
    size_t end = t.find(']', i);
    bool all_set = true;
    std::string group = render_flat(t.substr(i + 1, end - i - 1), v, all_set);
    if (all_set) out += group;
    i = end;
  }
  return out;
}

}  // namespace imgtool::matrix
