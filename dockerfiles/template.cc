#include "dockerfiles/template.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "core/error.h"
#include "core/fs.h"

namespace imgtool::dockerfiles {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

bool valid_name(const std::string& n) {
  return !n.empty() && std::all_of(n.begin(), n.end(), [](unsigned char c) {
    return std::islower(c) || std::isdigit(c) || c == '_' || c == '-';
  });
}

// Where we are in a template, for messages: "<file>:<line>".
struct Pos {
  const std::string& file;
  int line;
  std::string at() const { return file + ":" + std::to_string(line); }
};

std::string known_names(const Values& v) {
  std::string s;
  for (auto& [k, _] : v) s += (s.empty() ? "" : ", ") + k;
  return s;
}

const std::string& lookup(const Values& values, const std::string& name, const Pos& pos) {
  auto it = values.find(name);
  if (it == values.end())
    throw InputError(pos.at() + ": unknown placeholder {{" + name + "}} (known: " + known_names(values) + ")");
  return it->second;
}

// Replaces every {{name}} in one line.
std::string substitute(const std::string& line, const Values& values, const Pos& pos) {
  std::string out;
  size_t i = 0;
  while (true) {
    size_t open = line.find("{{", i);
    if (open == std::string::npos) return out + line.substr(i);
    size_t close = line.find("}}", open + 2);
    if (close == std::string::npos) throw InputError(pos.at() + ": '{{' without a closing '}}'");
    std::string name = trim(line.substr(open + 2, close - open - 2));
    if (!valid_name(name))
      throw InputError(pos.at() + ": malformed placeholder {{" + name + "}} (expected {{lower_case_name}})");
    out += line.substr(i, open - i) + lookup(values, name, pos);
    i = close + 2;
  }
}

// A line that is only a tag like "{{#name}}": returns the sigil and name.
bool whole_line_tag(const std::string& t, char& sigil, std::string& name) {
  if (t.size() < 5 || t.rfind("{{", 0) != 0 || t.substr(t.size() - 2) != "}}") return false;
  if (t.find("{{", 2) != std::string::npos) return false;
  sigil = t[2];
  name = trim(t.substr(3, t.size() - 5));
  return sigil == '#' || sigil == '^' || sigil == '/' || sigil == '>';
}

struct Section {
  std::string name;
  bool active;  // this section's own condition
  int line;
};

bool all_active(const std::vector<Section>& stack) {
  return std::all_of(stack.begin(), stack.end(), [](const Section& s) { return s.active; });
}

}  // namespace

std::string render_text(const std::string& text, const Values& values, const std::string& file_label,
                        const std::function<std::string(const std::string&)>& include) {
  std::istringstream in(text);
  std::string line, out;
  std::vector<Section> stack;
  Pos pos{file_label, 0};
  while (std::getline(in, line)) {
    ++pos.line;
    std::string t = trim(line);
    if (t.rfind("{{!", 0) == 0) continue;
    char sigil;
    std::string name;
    if (whole_line_tag(t, sigil, name)) {
      if (!valid_name(name)) throw InputError(pos.at() + ": malformed tag " + t);
      if (sigil == '#' || sigil == '^') {
        bool set = !lookup(values, name, pos).empty();
        stack.push_back({name, sigil == '#' ? set : !set, pos.line});
      } else if (sigil == '/') {
        if (stack.empty() || stack.back().name != name)
          throw InputError(pos.at() + ": {{/" + name + "}} closes no open section" +
                           (stack.empty() ? "" : " (open: {{" + stack.back().name + "}})"));
        stack.pop_back();
      } else {
        if (!include) throw InputError(pos.at() + ": partials are not available here");
        std::string part = include(name);
        if (all_active(stack)) out += part;
      }
      continue;
    }
    std::string rendered = substitute(line, values, pos);
    if (!all_active(stack)) continue;
    bool lone_placeholder = t.rfind("{{", 0) == 0 && t.find("}}") == t.size() - 2;
    if (lone_placeholder && trim(rendered).empty()) continue;
    out += rendered;
    if (rendered.empty() || rendered.back() != '\n') out += '\n';  // multi-line values end in '\n'
  }
  if (!stack.empty())
    throw InputError(file_label + ":" + std::to_string(stack.back().line) + ": section {{#" + stack.back().name +
                     "}} is never closed");
  return out;
}

TemplateDir::TemplateDir(std::filesystem::path dir, std::string label_prefix)
    : dir_(std::move(dir)), label_prefix_(std::move(label_prefix)) {}

SourceFile TemplateDir::read(const std::string& relative) const {
  auto path = dir_ / relative;
  std::string label = label_prefix_ + relative;
  if (!std::filesystem::is_regular_file(path))
    throw InputError(label + ": template file not found (looked in " + path.string() + ")");
  return {label, read_file(path)};
}

std::string TemplateDir::render(const std::string& name, const Values& values, std::vector<SourceFile>* used) const {
  if (!valid_name(name)) throw InputError("template name '" + name + "': expected [a-z0-9_-]+");
  SourceFile main = read(name + ".Dockerfile.in");
  if (used) used->push_back(main);
  auto include = [&](const std::string& partial) {
    SourceFile p = read("partials/" + partial + ".Dockerfile.in");
    if (used) used->push_back(p);
    return render_text(p.bytes, values, p.label);  // partials do not nest
  };
  return render_text(main.bytes, values, main.label, include);
}

}  // namespace imgtool::dockerfiles
