#include "matrix/matrix.h"

#include "core/error.h"

namespace imgtool::matrix {

Plan plan_matrix(const std::string& matrix_path, const KnowledgeBase& kb, const PlanOptions& opt) {
  throw Error("plan_matrix: not implemented yet");
}

nlohmann::json to_json(const Skipped& s) {
  return {{"axes", s.axes}, {"rule", s.rule}, {"reason", s.reason}, {"source", s.source}};
}

nlohmann::json to_json(const Plan& p) {
  nlohmann::json skipped = nlohmann::json::array();
  for (auto& s : p.skipped) skipped.push_back(to_json(s));
  return {{"kept", p.kept}, {"skipped", skipped}, {"warnings", p.warnings}, {"kb_version", p.kb_version}};
}

}  // namespace imgtool::matrix
