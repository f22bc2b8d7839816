#include "dockerfiles/stages.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "core/hash.h"
#include "core/strings.h"

namespace imgtool::dockerfiles {
namespace {

// The words of a line, split on blanks.
std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool is_from(const std::vector<std::string>& w) { return !w.empty() && strings::lower(w[0]) == "from"; }

// `FROM [--flag…] IMAGE AS NAME` → NAME; "" when unnamed.
std::string stage_name(const std::vector<std::string>& w) {
  for (size_t i = 1; i + 1 < w.size(); ++i)
    if (strings::lower(w[i]) == "as") return w[i + 1];
  return "";
}

}  // namespace

SharedStage shared_stage(std::string_view dockerfile) {
  std::istringstream in{std::string(dockerfile)};
  std::string text, name;
  int froms = 0;
  for (std::string line; std::getline(in, line);) {
    auto w = words(line);
    if (is_from(w) && ++froms == 1) name = stage_name(w);
    if (froms == 2) break;
    if (froms == 1) text += line + '\n';
  }
  if (froms < 2 || name.empty()) return {};
  return {name, sha256_hex(text).substr(0, 12)};
}

}  // namespace imgtool::dockerfiles
