#include "builder/report.h"

#include <algorithm>
#include <iomanip>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/fs.h"

namespace imgtool::builder {
namespace {

using json = nlohmann::json;

std::string str(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

std::string escape_xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string escape_md(std::string s) {
  for (size_t p = 0; (p = s.find('|', p)) != std::string::npos; p += 2) s.replace(p, 1, "\\|");
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

std::string fixed(double v, int prec = 1) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(prec) << v;
  return s.str();
}

std::string cell_problem(const json& c) {
  for (const char* step : {"build", "smoke", "publish"}) {
    const json& s = c[step];
    std::string e = str(s, "error");
    if (!e.empty()) return std::string(step) + ": " + e;
    if (s.contains("reasons") && !s["reasons"].empty()) return std::string(step) + ": " + s["reasons"][0].get<std::string>();
  }
  return "";
}

std::string headline(const json& r) {
  int ok = 0, total = 0;
  for (auto& c : r["cells"]) ++total, ok += c.value("ok", false) ? 1 : 0;
  return std::to_string(ok) + "/" + std::to_string(total) + " cells passed and published; " +
         std::to_string(r.value("docker_builds", 0)) + " docker build(s); " + fixed(r.value("seconds", 0.0)) + " s";
}

// A throughput entry (verify::Judgement::to_json: flat metric/value/unit) field.
std::string metric_field(const json& t, const char* key) {
  return t.contains("record") ? str(t["record"], key) : str(t, key);
}

double metric_value(const json& t) {
  const json& r = t.contains("record") ? t["record"] : t;
  return r.contains("value") && r["value"].is_number() ? r["value"].get<double>() : 0.0;
}

// Step statuses that count as success in JUnit.
bool step_ok(const std::string& status) {
  static const std::set<std::string> good = {"built", "up-to-date", "pass", "cached", "published", "unchanged"};
  return good.count(status) > 0;
}

// One sparkline per metric: this run's value last, earlier runs before it, the floor dashed.
std::string metric_svg(const json& t, int y0, int width, int height) {
  std::vector<double> values;
  for (auto& h : t.value("history", json::array())) values.push_back(h.value("value", 0.0));
  double value = metric_value(t);
  if (values.empty() || values.back() != value) values.push_back(value);
  double floor = t.contains("floor") && t["floor"].is_number() ? t["floor"].get<double>() : 0;
  double hi = std::max(*std::max_element(values.begin(), values.end()), floor) * 1.1;
  if (hi <= 0) hi = 1;
  auto y = [&](double v) { return y0 + height - static_cast<int>(v / hi * height); };
  std::ostringstream s;
  int left = 170, span = width - left - 90;
  std::string metric = metric_field(t, "metric"), unit = metric_field(t, "unit");
  s << "<text x=\"4\" y=\"" << y0 + height / 2 + 4 << "\">" << escape_xml(metric) << "</text>";
  s << "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"";
  for (size_t i = 0; i < values.size(); ++i)
    s << left + (values.size() == 1 ? span : static_cast<int>(i * span / (values.size() - 1))) << ','
      << y(values[i]) << ' ';
  s << "\"/>";
  s << "<circle cx=\"" << left + span << "\" cy=\"" << y(value) << "\" r=\"3\" fill=\""
    << (t.value("status", "ok") == "ok" ? "#2ca02c" : "#d62728") << "\"/>";
  if (floor > 0)
    s << "<line x1=\"" << left << "\" x2=\"" << left + span << "\" y1=\"" << y(floor) << "\" y2=\"" << y(floor)
      << "\" stroke=\"#d62728\" stroke-dasharray=\"4 3\"/>";
  s << "<text x=\"" << left + span + 6 << "\" y=\"" << y(value) + 4 << "\">" << fixed(value) << ' '
    << escape_xml(unit) << "</text>";
  return s.str();
}

std::string md_row(const json& c) {
  return "| " + escape_md(str(c, "tag")) + " | " + str(c["build"], "status") + " | " + str(c["smoke"], "status") +
         " | " + str(c["publish"], "status") + " | " + escape_md(str(c["publish"], "digest").substr(0, 19)) + " | " +
         escape_md(cell_problem(c)) + " |\n";
}

}  // namespace

std::string render_svg_chart(const json& cell) {
  const json& tp = cell["smoke"].value("throughput", json::array());
  if (tp.empty()) {
    std::string why = cell["smoke"].value("status", "") == "skipped" ? "smoke did not run"
                                                                      : "no throughput measured (GPU part did not run)";
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"28\"><text x=\"4\" y=\"18\" "
           "fill=\"#666\">" + escape_xml(why) + "</text></svg>";
  }
  int row = 40, width = 640;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << row * tp.size() + 8
    << "\" font-family=\"sans-serif\" font-size=\"12\">";
  for (size_t i = 0; i < tp.size(); ++i) s << metric_svg(tp[i], static_cast<int>(i) * row + 4, width, row - 10);
  s << "</svg>";
  return s.str();
}

std::string render_markdown(const json& r) {
  std::ostringstream s;
  s << "# imgtool nightly — " << str(r, "matrix") << "\n\n" << headline(r) << "  \n"
    << "registry `" << str(r, "registry") << "`, shard(s) " << str(r, "shards") << ", builder " << str(r, "builder")
    << ", gpus `" << str(r, "gpus") << "`\n\n";
  s << "| cell | build | smoke | publish | digest | problem |\n|---|---|---|---|---|---|\n";
  for (auto& c : r["cells"]) s << md_row(c);
  for (auto& c : r["cells"]) {
    s << "\n## " << str(c, "tag") << "\n\n- image: `" << str(c, "image") << "` (" << str(c, "image_id").substr(0, 19)
      << ")\n- inputs hash: `" << str(c, "inputs_hash") << "`\n- build: " << str(c["build"], "status") << " in "
      << fixed(c["build"].value("seconds", 0.0)) << " s, log `" << str(c["build"], "log") << "`\n";
    s << "- smoke: " << str(c["smoke"], "status");
    for (auto& why : c["smoke"].value("reasons", json::array())) s << "\n  - " << why.get<std::string>();
    s << "\n- publish: " << str(c["publish"], "status") << ' ' << str(c["publish"], "ref") << ' '
      << str(c["publish"], "digest") << ' ' << str(c["publish"], "error") << "\n";
    for (auto& t : c["smoke"].value("throughput", json::array()))
      s << "- throughput " << metric_field(t, "metric") << ": " << metric_field(t, "value") << ' '
        << metric_field(t, "unit") << " (" << str(t, "status") << ")\n";
  }
  return s.str();
}

std::string render_html(const json& r) {
  std::ostringstream s;
  s << "<!doctype html><html><head><meta charset=\"utf-8\"><title>imgtool nightly</title><style>"
       "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
       "padding:4px 8px}.ok{color:#2ca02c}.bad{color:#d62728}</style></head><body>";
  s << "<h1>imgtool nightly — " << escape_xml(str(r, "matrix")) << "</h1><p>" << escape_xml(headline(r)) << "<br>registry "
    << escape_xml(str(r, "registry")) << ", builder " << escape_xml(str(r, "builder")) << "</p>";
  s << "<table><tr><th>cell</th><th>build</th><th>smoke</th><th>publish</th><th>digest</th><th>problem</th></tr>";
  for (auto& c : r["cells"]) {
    s << "<tr class=\"" << (c.value("ok", false) ? "ok" : "bad") << "\"><td>" << escape_xml(str(c, "tag")) << "</td>";
    for (const char* step : {"build", "smoke", "publish"}) s << "<td>" << escape_xml(str(c[step], "status")) << "</td>";
    s << "<td><code>" << escape_xml(str(c["publish"], "digest").substr(0, 19)) << "</code></td><td>"
      << escape_xml(cell_problem(c)) << "</td></tr>";
  }
  s << "</table>";
  for (auto& c : r["cells"])
    s << "<h2>" << escape_xml(str(c, "tag")) << "</h2><p>throughput (this run last; dashed: floor)</p>"
      << render_svg_chart(c);
  s << "</body></html>\n";
  return s.str();
}

std::string render_junit(const json& r) {
  std::ostringstream cases;
  int tests = 0, failures = 0;
  for (auto& c : r["cells"])
    for (const char* step : {"build", "smoke", "publish"}) {
      ++tests;
      std::string status = str(c[step], "status");
      cases << "  <testcase classname=\"nightly." << escape_xml(str(c, "tag")) << "\" name=\"" << step << "\" time=\""
            << fixed(c[step].value("seconds", 0.0), 3) << "\">";
      if (status == "skipped") {
        cases << "<skipped message=\"" << escape_xml(str(c[step], "error")) << "\"/>";
      } else if (!step_ok(status)) {
        ++failures;
        std::string why = cell_problem(c);
        cases << "<failure message=\"" << escape_xml(why) << "\">" << escape_xml(c[step].dump(2)) << "</failure>";
      }
      cases << "</testcase>\n";
    }
  std::ostringstream s;
  s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"imgtool-nightly\" tests=\"" << tests
    << "\" failures=\"" << failures << "\" time=\"" << fixed(r.value("seconds", 0.0), 3) << "\">\n"
    << cases.str() << "</testsuite>\n";
  return s.str();
}

void write_report(const fs::path& dir, const json& r) {
  fs::create_directories(dir);
  write_file_atomic(dir / "nightly.json", r.dump(2) + "\n");
  write_file_atomic(dir / "report.md", render_markdown(r));
  write_file_atomic(dir / "report.html", render_html(r));
  write_file_atomic(dir / "junit.xml", render_junit(r));
}

json merge_reports(const std::vector<fs::path>& dirs) {
  json out = {{"kind", "imgtool-nightly-report"}, {"cells", json::array()}, {"shards", json::array()},
              {"docker_builds", 0}, {"seconds", 0.0}, {"ok", true}};
  std::set<std::string> tags;
  for (auto& d : dirs) {
    fs::path file = d / "nightly.json";
    if (!fs::exists(file)) throw InputError(d.string() + ": expected a nightly report folder (nightly.json), found none");
    json r = json::parse(read_file(file));
    for (const char* k : {"matrix", "registry", "builder", "gpus"}) out[k] = r.value(k, "");
    for (auto& sh : r.value("shards", json::array())) out["shards"].push_back(sh);
    out["docker_builds"] = out["docker_builds"].get<int>() + r.value("docker_builds", 0);
    out["seconds"] = std::max(out["seconds"].get<double>(), r.value("seconds", 0.0));
    out["ok"] = out["ok"].get<bool>() && r.value("ok", false);
    for (auto& c : r["cells"]) {
      if (!tags.insert(c.value("tag", "")).second)
        throw InputError(file.string() + ": cell '" + c.value("tag", "") + "' is also in another shard's report; "
                         "expected disjoint shards (same --shard n, different i)");
      out["cells"].push_back(c);
    }
  }
  std::sort(out["cells"].begin(), out["cells"].end(),
            [](const json& a, const json& b) { return a.value("tag", "") < b.value("tag", ""); });
  return out;
}

}  // namespace imgtool::builder
