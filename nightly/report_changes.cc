#include "nightly/report_changes.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>

#include "core/fs.h"
#include "core/json_file.h"

namespace imgtool::nightly {
namespace {

constexpr size_t kMaxPackageChanges = 20;

std::string short_digest(const std::string& d) { return d.size() > 19 ? d.substr(0, 19) + "…" : d; }

// One field of a cell, compared: its name, how to read it, whether digests are shortened.
struct ComparedField {
  const char* name;
  std::string NightlyCell::*member;
  bool digest;
};

const ComparedField kComparedFields[] = {
    {"inputs hash", &NightlyCell::inputs_hash, true},
    {"KB version", &NightlyCell::kb_version, false},
    {"base", &NightlyCell::base, false},
    {"image", &NightlyCell::image_id, true},
};

std::vector<std::string> package_changes(const std::map<std::string, std::string>& was,
                                         const std::map<std::string, std::string>& now) {
  std::vector<std::string> out;
  for (auto& [name, v] : now) {
    auto it = was.find(name);
    if (it == was.end())
      out.push_back("+ " + name + " " + v);
    else if (it->second != v)
      out.push_back(name + " " + it->second + " → " + v);
  }
  for (auto& [name, v] : was)
    if (!now.count(name)) out.push_back("− " + name + " " + v);
  return out;
}

std::vector<std::string> cell_changes(NightlyCell& c, const NightlyCell& was) {
  std::vector<std::string> out;
  for (auto& f : kComparedFields) {
    const std::string &a = was.*f.member, &b = c.*f.member;
    if (a != b && !b.empty())
      out.push_back(std::string(f.name) + " " + (f.digest ? short_digest(a) : a) + " → " +
                    (f.digest ? short_digest(b) : b));
  }
  if (!c.publish.digest.empty() && c.publish.digest != was.publish.digest)
    out.push_back("published digest " +
                  (was.publish.digest.empty() ? std::string("(none)") : short_digest(was.publish.digest)) + " → " +
                  short_digest(c.publish.digest));
  if (c.packages.empty() && !c.publish.digest.empty() && c.publish.digest == was.publish.digest)
    c.packages = was.packages;
  if (!c.packages.empty() && !was.packages.empty()) {
    auto p = package_changes(was.packages, c.packages);
    if (!p.empty()) {
      std::string line = "packages (" + std::to_string(p.size()) + "): ";
      for (size_t i = 0; i < std::min(p.size(), kMaxPackageChanges); ++i) line += (i ? "; " : "") + p[i];
      if (p.size() > kMaxPackageChanges) line += "; … and " + std::to_string(p.size() - kMaxPackageChanges) + " more";
      out.push_back(line);
    }
  }
  if (out.empty()) out.push_back("unchanged");
  return out;
}

}  // namespace

void compare_runs(NightlyReport& now, const NightlyReport& before) {
  now.previous = before.started;
  std::map<std::string, const NightlyCell*> was;
  for (auto& c : before.cells) was[c.tag] = &c;
  for (auto& c : now.cells) {
    auto it = was.find(c.tag);
    c.changes =
        it == was.end() ? std::vector<std::string>{"new cell (not in the previous run)"} : cell_changes(c, *it->second);
  }
}

void compare_with_last_run(NightlyReport& now, const fs::path& state_dir) {
  fs::path file = state_dir / "last-nightly.json";
  NightlyReport before;
  bool compared = false;
  if (fs::exists(file)) {
    try {
      before = read_json_file(file, "the last nightly report").get<NightlyReport>();
      compare_runs(now, before);
      compared = true;
    } catch (const std::exception&) {
      before = {};  // an unreadable memory is no reason to fail tonight's run: nothing to compare with
    }
  }
  if (!compared)
    for (auto& c : now.cells) c.changes = {"first run (nothing to compare with)"};
  // Remembered: tonight's cells, plus the cells other shards (or --only runs) on this state left.
  NightlyReport keep = now;
  for (auto& c : before.cells)
    if (std::none_of(now.cells.begin(), now.cells.end(), [&](auto& n) { return n.tag == c.tag; }))
      keep.cells.push_back(c);
  write_file_atomic(file, nlohmann::json(keep).dump() + "\n");
}

MatrixLayers matrix_layers(const NightlyReport& r) {
  MatrixLayers m;
  std::map<std::string, SharedLayer> by_digest;
  for (auto& c : r.cells) {
    if (c.layers.empty()) continue;
    ++m.cells;
    for (auto& l : c.layers) {
      m.total_bytes += l.size;
      auto& s = by_digest[l.digest];
      s.layer = l;
      if (s.cells.empty() || s.cells.back() != c.tag) s.cells.push_back(c.tag);
    }
  }
  for (auto& [d, s] : by_digest) {
    m.unique_bytes += s.layer.size;
    m.layers.push_back(s);
  }
  std::stable_sort(m.layers.begin(), m.layers.end(), [](auto& a, auto& b) { return a.layer.size > b.layer.size; });
  return m;
}

std::string human_bytes(long long n) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  std::ostringstream s;
  if (u == 0)
    s << n << " B";
  else
    s << std::fixed << std::setprecision(1) << v << ' ' << units[u];
  return s.str();
}

}  // namespace imgtool::nightly
