// A matrix file (YAML, or the same structure as JSON) expanded against the
// knowledge base into a Plan: the kept cells (fully resolved, see cell.h),
// the skipped combinations with the rule and fact that excluded them, and
// warnings. The file format is documented in matrix/README.md.
//
// Path of one cell: matrix file -> axes x include/exclude (expand.h)
//   -> rules against the KB (rules.h) -> resolved Cell (tag, base image, pip source).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "matrix/cell.h"
#include "matrix/kb.h"

namespace imgtool::matrix {

struct Skipped {
  std::map<std::string, std::string> axes;  // paddle, cuda, python, os, variant, flavor…
  std::string rule;                         // rule id, e.g. "paddle-cuda"
  std::string reason;                       // "paddle 2.6.2 × cuda 12.6: Paddle 2.6 GPU wheels exist for CUDA …"
  std::string source;                       // the fact's source
};

struct Plan {
  std::vector<Cell> kept;
  std::vector<Skipped> skipped;
  std::vector<std::string> warnings;  // plan-wide (each cell also has its own in Cell::warnings)
  std::string kb_version;
  std::string kb_released;  // the KB's `released` day (YYYY-MM-DD): the cells' SOURCE_DATE_EPOCH
};

struct PlanOptions {
  // "Today" for the Python end-of-life warning, ISO "YYYY-MM-DD". Empty = the
  // system clock (tests inject a fixed date).
  std::string today;
};

// Reads and expands the matrix file. Throws InputError with "file:line:col: …"
// (or the field path) for bad input: YAML/JSON syntax, unknown axis or key, a
// version absent from the KB, a malformed version, an unknown tag-template
// placeholder, two cells with the same tag, or no kept cell at all.
Plan plan_matrix(const std::string& matrix_path, const KnowledgeBase& kb, const PlanOptions& opt = {});
// The same for a parsed spec. With require_kept = false (explain's off-axis
// questions) nothing is required of the result (no kept cell, tags may repeat)
// and a Paddle version the KB lacks is a skip (rule paddle-release).
struct MatrixSpec;
Plan plan_spec(const MatrixSpec& spec, const KnowledgeBase& kb, const PlanOptions& opt, bool require_kept);

nlohmann::json to_json(const Skipped& s);
nlohmann::json to_json(const Plan& p);

}  // namespace imgtool::matrix
