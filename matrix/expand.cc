#include "matrix/expand.h"

#include <algorithm>
#include <set>

#include "core/error.h"

namespace imgtool::matrix {

namespace {

const std::set<std::string> kGpuOnlyAxes = {"cuda", "cudnn", "trt"};

std::vector<Axes> cartesian(const MatrixSpec& m) {
  std::vector<Axes> out = {{}};
  for (auto& name : axis_names()) {
    auto it = m.axes.find(name);
    if (it == m.axes.end()) continue;
    std::vector<Axes> next;
    for (auto& partial : out)
      for (auto& v : it->second) {
        Axes a = partial;
        a[name] = v;
        next.push_back(a);
      }
    out = next;
  }
  return out;
}

void fill_defaults(Axes& a) {
  if (!a.count("variant")) a["variant"] = "gpu";
  if (!a.count("flavor")) a["flavor"] = "runtime";
  if (a["variant"] == "cpu")
    for (auto& k : kGpuOnlyAxes) a.erase(k);
}

bool matches(const Axes& entry, const Axes& combo) {
  return std::all_of(entry.begin(), entry.end(), [&](auto& kv) {
    auto it = combo.find(kv.first);
    return it != combo.end() && it->second == kv.second;
  });
}

// An include entry fits a combination when it agrees on every matrix axis the combination has.
bool fits(const Entry& e, const Combo& c, const MatrixSpec& m) {
  for (auto& [k, v] : e.axes) {
    if (!m.axes.count(k)) continue;
    auto it = c.axes.find(k);
    if (it == c.axes.end() || it->second != v) return false;
  }
  return true;
}

Combo new_combo(const Entry& e, const MatrixSpec& m) {
  Combo c{e.axes, m.defaults, e.where};
  c.settings.merge_from(e.settings);
  for (auto& [name, vals] : m.axes)
    if (!c.axes.count(name) && vals.size() == 1) c.axes[name] = vals[0];
  fill_defaults(c.axes);
  std::vector<std::string> required = {"paddle", "python", "os"};
  if (c.axes["variant"] == "gpu") required.push_back("cuda");
  for (auto& r : required)
    if (!c.axes.count(r))
      throw InputError(e.where + ": expected the include entry to set '" + r +
                       "' (it matches no combination of the axes), found none");
  return c;
}

}  // namespace

std::vector<Combo> expand(const MatrixSpec& m) {
  std::vector<Combo> out;
  if (!m.axes.empty()) {
    for (auto a : cartesian(m)) {
      fill_defaults(a);
      bool dup = std::any_of(out.begin(), out.end(), [&](auto& c) { return c.axes == a; });
      bool excluded = std::any_of(m.exclude.begin(), m.exclude.end(), [&](auto& e) { return matches(e.axes, a); });
      if (!dup && !excluded) out.push_back({a, m.defaults, m.axes_where});
    }
  }
  // As GitHub Actions' matrix include: an entry extends the combinations of the axes that it fits;
  // one that fits none is a combination of its own, which later entries do not extend (a matrix
  // of includes only is one combination per entry, not each entry merged into the first).
  const size_t from_axes = out.size();
  for (auto& e : m.include) {
    bool fitted = false;
    for (size_t i = 0; i < from_axes; ++i) {
      Combo& c = out[i];
      if (!fits(e, c, m)) continue;
      fitted = true;
      for (auto& [k, v] : e.axes) c.axes[k] = v;
      fill_defaults(c.axes);
      c.settings.merge_from(e.settings);
    }
    if (!fitted) out.push_back(new_combo(e, m));
  }
  return out;
}

std::string describe_axes(const Axes& a, const std::vector<std::string>& only) {
  std::string s;
  for (auto& name : axis_names()) {
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    auto it = a.find(name);
    if (it == a.end()) continue;
    s += (s.empty() ? "" : " × ") + name + " " + it->second;
  }
  return s;
}

}  // namespace imgtool::matrix
