// Why a cell is (not) in the plan: `--explain 'paddle=2.6.2,cuda=12.6'`
// selects every combination of the plan whose axes match all given pairs and
// reports, for each, the rule that skipped it (with its fact and source) or,
// for a kept cell, its tag, the facts it relies on and its warnings.
#pragma once
#include <string>
#include <vector>

#include "matrix/matrix.h"

namespace imgtool::matrix {

struct ExplainItem {
  std::map<std::string, std::string> axes;
  bool kept = false;
  std::string tag;                    // kept only
  std::string rule, reason, source;   // skipped only
  std::vector<std::string> sources;   // kept: facts relied on
  std::vector<std::string> warnings;  // kept
};

// Parses "axis=value,axis=value"; throws InputError on an unknown axis or a bad pair.
std::map<std::string, std::string> parse_selector(const std::string& s);

std::vector<ExplainItem> explain(const Plan& plan, const std::map<std::string, std::string>& selector);

// Any combination a user asks about, not only those on the matrix's axes: the
// plan's items when the selector matches some; otherwise the selector's values
// replace the matrix's axes (other axes keep the matrix's values, include/
// exclude are dropped) and the rules judge that ("why is there no paddle 2.6.2
// x Python 3.13?"); `off_axis` says which happened.
std::vector<ExplainItem> explain_any(const std::string& matrix_path, const KnowledgeBase& kb,
                                     const std::map<std::string, std::string>& selector, const PlanOptions& opt,
                                     bool& off_axis);

// What Paddle `version` was really published as (the KB's tags of that version, confirmed and
// not), with the source: the answer to "is there a 2.5.0-gpu-cuda11.7-cudnn8?". "" for a version
// the KB does not know.
std::string published_images(const KnowledgeBase& kb, const std::string& version);

// The axes of a kept cell, as Skipped::axes would name them.
std::map<std::string, std::string> cell_axes(const Cell& c);

}  // namespace imgtool::matrix
