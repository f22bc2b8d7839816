#include "builder/stage_plan.h"

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

#include "core/fs.h"
#include "core/hash.h"

namespace imgtool::builder {
namespace {

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

std::string first_stage_text(std::string_view dockerfile) {
  static const std::regex from_re(R"(^\s*FROM\s.*$)", std::regex::icase);
  std::string text;
  int froms = 0;
  for (auto& l : lines_of(dockerfile)) {
    if (std::regex_match(l, from_re) && ++froms == 2) return text;
    if (froms == 1) text += l + '\n';
  }
  return "";
}

std::string base_key(const matrix::Cell& c, std::string_view dockerfile) {
  if (!first_named_stage(dockerfile).empty()) return sha256_hex(first_stage_text(dockerfile)).substr(0, 12);
  std::string joined = c.base_image + '\n' + c.base_digest + '\n' + c.os + '\n' + c.python + '\n' + c.cuda + '\n' +
                       c.cudnn;
  return sha256_hex(joined).substr(0, 12);
}

std::string first_named_stage(std::string_view dockerfile) {
  static const std::regex from_re(R"(^\s*FROM\s+\S+(\s+AS\s+([A-Za-z0-9_.-]+))?\s*$)", std::regex::icase);
  std::string first;
  int froms = 0;
  for (auto& l : lines_of(dockerfile)) {
    std::smatch m;
    if (!std::regex_match(l, m, from_re)) continue;
    if (++froms == 1) first = m[2].matched ? m[2].str() : "";
  }
  return froms >= 2 ? first : "";
}

std::vector<std::string> declared_args(std::string_view dockerfile) {
  static const std::regex arg_re(R"(^\s*ARG\s+([A-Za-z_][A-Za-z0-9_]*)(=.*)?\s*$)", std::regex::icase);
  std::vector<std::string> out;
  for (auto& l : lines_of(dockerfile)) {
    std::smatch m;
    if (std::regex_match(l, m, arg_re) && std::find(out.begin(), out.end(), m[1].str()) == out.end())
      out.push_back(m[1].str());
  }
  return out;
}

std::vector<StageGroup> group_by_base(const std::vector<GeneratedCell>& cells) {
  std::vector<StageGroup> groups;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < cells.size(); ++i) {
    std::string dockerfile = read_file(cells[i].dockerfile());
    std::string key = base_key(cells[i].cell, dockerfile);
    auto [it, fresh] = index.emplace(key, groups.size());
    if (fresh) groups.push_back({key, first_named_stage(dockerfile), {}});
    groups[it->second].cells.push_back(i);
  }
  return groups;
}

}  // namespace imgtool::builder
