#include "matrix/explain.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/strings.h"
#include "matrix/matrix_file.h"

namespace imgtool::matrix {

std::map<std::string, std::string> parse_selector(const std::string& s) {
  std::map<std::string, std::string> out;
  std::stringstream ss(s);
  std::string pair;
  while (std::getline(ss, pair, ',')) {
    auto eq = pair.find('=');
    std::string k = pair.substr(0, eq);
    if (eq == std::string::npos || eq + 1 == pair.size())
      throw InputError("--explain: expected axis=value pairs like paddle=2.6.2,cuda=12.6, found '" + pair + "'");
    if (std::find(axis_names().begin(), axis_names().end(), k) == axis_names().end())
      throw InputError("--explain: expected an axis (paddle, cuda, cudnn, trt, python, os, variant, flavor), found '" +
                       k + "'");
    out[k] = pair.substr(eq + 1);
  }
  if (out.empty()) throw InputError("--explain: expected axis=value pairs like paddle=2.6.2,cuda=12.6, found nothing");
  return out;
}

std::map<std::string, std::string> cell_axes(const Cell& c) {
  std::map<std::string, std::string> a = {
      {"variant", c.variant}, {"paddle", c.paddle}, {"python", c.python}, {"os", c.os}, {"flavor", c.flavor}};
  if (c.variant == "gpu") {
    a["cuda"] = c.cuda;
    a["cudnn"] = c.cudnn;
    if (!c.trt.empty()) a["trt"] = c.trt;
  }
  return a;
}

namespace {
// cudnn/trt compare on the selector's precision ("9.5" selects 9.5 and 9.5.1).
bool selected(const std::map<std::string, std::string>& axes, const std::map<std::string, std::string>& sel) {
  return std::all_of(sel.begin(), sel.end(), [&](auto& kv) {
    auto it = axes.find(kv.first);
    if (it == axes.end()) return false;
    auto a = Version::parse(kv.second), b = Version::parse(it->second);
    return it->second == kv.second || (a && b && *a == *b);
  });
}
}  // namespace

std::vector<ExplainItem> explain(const Plan& plan, const std::map<std::string, std::string>& sel) {
  std::vector<ExplainItem> out;
  for (auto& c : plan.kept) {
    auto axes = cell_axes(c);
    if (selected(axes, sel)) out.push_back({axes, true, c.tag, "", "", "", c.sources, c.warnings});
  }
  // The same rule and reason for several combinations of the other axes is said once.
  std::set<std::pair<std::string, std::string>> said;
  for (auto& s : plan.skipped)
    if (selected(s.axes, sel) && said.insert({s.rule, s.reason}).second)
      out.push_back({s.axes, false, "", s.rule, s.reason, s.source, {}, {}});
  return out;
}

std::string published_images(const KnowledgeBase& kb, const std::string& version) {
  const PaddleRelease* r = kb.paddle_release(version);
  if (!r) return "";
  auto expand = [&](const std::vector<std::string>& tags) {
    std::vector<std::string> out;
    for (std::string t : tags) {
      if (auto p = t.find("{version}"); p != std::string::npos) t.replace(p, 9, version);
      if (t.rfind(version, 0) == 0) out.push_back(t);  // the tags of this version (a release lists its series')
    }
    return out;
  };
  auto confirmed = expand(r->published), unconfirmed = expand(r->published_unconfirmed);
  std::string s = "Paddle " + version + " published images (paddlepaddle/paddle): " +
                  (confirmed.empty() ? "none confirmed" : strings::join(confirmed, ", "));
  if (!unconfirmed.empty()) s += "; seen, UNCONFIRMED: " + strings::join(unconfirmed, ", ");
  return s + " (source: " + (r->published_fact.source.empty() ? r->source : r->published_fact.source) + ")";
}

std::vector<ExplainItem> explain_any(const std::string& path, const KnowledgeBase& kb,
                                     const std::map<std::string, std::string>& sel, const PlanOptions& opt,
                                     bool& off_axis) {
  MatrixSpec spec = read_matrix_file(path, kb);
  off_axis = false;
  auto items = explain(plan_spec(spec, kb, opt, true), sel);
  if (!items.empty()) return items;
  off_axis = true;
  for (auto& [k, v] : sel) {
    if (k != "variant" && k != "flavor" && k != "os" && !Version::parse(v))
      throw InputError("--explain: " + k + ": expected a version like 3.12, found '" + v + "'");
    spec.axes[k] = {v};
  }
  if (sel.count("cuda") && !sel.count("variant")) spec.axes["variant"] = {"gpu"};
  spec.include.clear();
  spec.exclude.clear();
  return explain(plan_spec(spec, kb, opt, false), sel);
}

}  // namespace imgtool::matrix
