#include "dockerfiles/cell_file.h"

#include "core/hash.h"

namespace imgtool::dockerfiles {

void to_json(nlohmann::json& j, const CellFile& f) {
  j = {{"cell", f.cell},
       {"inputs_hash", f.inputs_hash},
       {"kb_version", f.kb_version},
       {"build", {{"stage", f.build.stage}, {"stage_key", f.build.stage_key}}},
       {"labels", f.labels}};
}

void from_json(const nlohmann::json& j, CellFile& f) {
  f.cell = j.at("cell").get<matrix::Cell>();
  f.inputs_hash = j.at("inputs_hash").get<std::string>();
  f.kb_version = j.value("kb_version", "");
  const auto build = j.value("build", nlohmann::json::object());
  f.build = {build.value("stage", ""), build.value("stage_key", "")};
  f.labels = j.value("labels", std::map<std::string, std::string>{});
}

std::string group_key(const SharedStage& s, const matrix::Cell& c) {
  if (!s.stage_key.empty()) return s.stage_key;
  std::string joined = c.base_image + '\n' + c.base_digest + '\n' + c.base_from + '\n' + c.os + '\n' + c.python + '\n' +
                       c.cuda + '\n' + c.cudnn;
  return sha256_hex(joined).substr(0, 12);
}

}  // namespace imgtool::dockerfiles
