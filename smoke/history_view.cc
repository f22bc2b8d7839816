#include "smoke/history_view.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>
#include <tuple>

#include "core/strings.h"

namespace imgtool::smoke {
namespace {

using nlohmann::json;

std::string fixed(double v, int prec) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", prec, v);
  return buf;
}

double median_of(const json& points) {
  std::vector<double> v;
  for (auto& p : points) v.push_back(p["value"].get<double>());
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

json history_json(const RecordStore& store, const HistoryOptions& opt) {
  std::map<std::tuple<std::string, std::string, std::string>, json> series;
  for (const Record& r : store.query({opt.tag, opt.gpu, "", opt.metric})) {
    json& s = series[{r.gpu, r.driver, r.metric}];
    if (s.is_null())
      s = {{"gpu", r.gpu}, {"driver", r.driver}, {"metric", r.metric}, {"unit", r.unit}, {"points", json::array()}};
    s["points"].push_back({{"time", r.time},
                           {"time_utc", strings::utc_rfc3339(r.time)},
                           {"value", r.value},
                           {"image_digest", r.image_digest}});
  }
  json out = {{"tag", opt.tag}, {"records", store.path()}, {"series", json::array()}};
  for (auto& [key, s] : series) {
    json& pts = s["points"];
    if (opt.last > 0 && pts.size() > static_cast<size_t>(opt.last)) pts.erase(pts.begin(), pts.end() - opt.last);
    out["series"].push_back(s);
  }
  return out;
}

std::string history_text(const json& h) {
  std::ostringstream o;
  if (h["series"].empty()) {
    o << "no records for tag " << h["tag"].get<std::string>() << " in " << h["records"].get<std::string>()
      << " (records are written by `imgtool smoke` runs with a GPU)\n";
    return o.str();
  }
  for (auto& s : h["series"]) {
    std::string unit = s["unit"];
    o << s["metric"].get<std::string>() << " on " << s["gpu"].get<std::string>() << ", driver "
      << s["driver"].get<std::string>() << " (" << s["points"].size() << " runs, median "
      << fixed(median_of(s["points"]), 1) << " " << unit << ")\n";
    for (auto& p : s["points"]) {
      std::string digest = p["image_digest"];
      o << "  " << p["time_utc"].get<std::string>() << "  " << fixed(p["value"].get<double>(), 1) << " " << unit << "  "
        << digest.substr(0, std::min<size_t>(digest.size(), 80)) << "\n";
    }
  }
  return o.str();
}

}  // namespace imgtool::smoke
