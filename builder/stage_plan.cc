#include "builder/stage_plan.h"

#include <map>

#include "dockerfiles/cell_file.h"

namespace imgtool::builder {

std::string base_key(const GeneratedCell& g) { return dockerfiles::group_key({g.stage, g.stage_key}, g.cell); }

std::vector<StageGroup> group_by_base(const std::vector<GeneratedCell>& cells) {
  std::vector<StageGroup> groups;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (!cells[i].generate_error.empty()) continue;  // nothing to build
    std::string key = base_key(cells[i]);
    auto [it, fresh] = index.emplace(key, groups.size());
    if (fresh) groups.push_back({key, cells[i].stage, {}});
    groups[it->second].cells.push_back(i);
  }
  return groups;
}

}  // namespace imgtool::builder
