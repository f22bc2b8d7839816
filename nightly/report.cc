#include "nightly/report.h"

#include <algorithm>
#include <iomanip>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/fs.h"
#include "core/json_file.h"
#include "core/junit.h"
#include "core/refname.h"
#include "core/strings.h"
#include "nightly/report_changes.h"
#include "smoke/evidence.h"
#include "smoke/records_judge.h"

namespace imgtool::nightly {
namespace {

using json = nlohmann::json;

using strings::xml_escape;

// One Markdown table cell or line: printable (no control character of a shard's or an image's
// text reaches a terminal that shows the file), '|' escaped.
std::string escape_md(std::string_view raw) {
  std::string s = strings::printable(raw);
  for (size_t p = 0; (p = s.find('|', p)) != std::string::npos; p += 2) s.replace(p, 1, "\\|");
  return s;
}

std::string fixed(double v, int prec = 1) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(prec) << v;
  return s.str();
}

std::string headline(const NightlyReport& r) {
  int ok = 0;
  for (auto& c : r.cells) ok += c.ok() ? 1 : 0;
  return std::to_string(ok) + "/" + std::to_string(r.cells.size()) + " cells passed and published; " +
         std::to_string(r.docker_builds) + " docker build(s); " + fixed(r.seconds) + " s";
}

// One sparkline per metric: this run's value last, earlier runs before it, the floor dashed.
std::string metric_svg(const ThroughputPoint& t, int y0, int width, int height) {
  std::vector<double> values;
  for (auto& h : t.history) values.push_back(h.value);
  double value = t.value;
  if (values.empty() || values.back() != value) values.push_back(value);
  double floor = t.floor.value_or(0);
  double hi = std::max(*std::max_element(values.begin(), values.end()), floor) * 1.1;
  if (hi <= 0) hi = 1;
  auto y = [&](double v) { return y0 + height - static_cast<int>(v / hi * height); };
  std::ostringstream s;
  int left = 170, span = width - left - 90;
  const std::string &metric = t.metric, &unit = t.unit;
  s << "<text x=\"4\" y=\"" << y0 + height / 2 + 4 << "\">" << xml_escape(metric) << "</text>";
  s << "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"";
  for (size_t i = 0; i < values.size(); ++i)
    s << left + (values.size() == 1 ? span : static_cast<int>(i * span / (values.size() - 1))) << ',' << y(values[i])
      << ' ';
  s << "\"/>";
  s << "<circle cx=\"" << left + span << "\" cy=\"" << y(value) << "\" r=\"3\" fill=\""
    << (t.status == CheckStatus::kPass   ? "#2ca02c"
        : t.status == CheckStatus::kWarn ? "#ff7f0e"
                                         : "#d62728")
    << "\"/>";
  if (floor > 0)
    s << "<line x1=\"" << left << "\" x2=\"" << left + span << "\" y1=\"" << y(floor) << "\" y2=\"" << y(floor)
      << "\" stroke=\"#d62728\" stroke-dasharray=\"4 3\"/>";
  s << "<text x=\"" << left + span + 6 << "\" y=\"" << y(value) + 4 << "\">" << fixed(value) << ' ' << xml_escape(unit)
    << "</text>";
  return s.str();
}

// One step of a cell as the renderers see it.
struct StepView {
  const char* name;
  std::string status;
  bool ok, skipped;
  double seconds;
  std::string error;
  json detail;
};

// "pass (no GPU)" / "cached (test double)" for a gpu cell whose smoke passed without a GPU's bound
// evidence: the table never reads a bare "pass" for a GPU part that never ran on hardware.
std::string smoke_status_text(const NightlyCell& c) {
  std::string s = to_string(c.smoke.status);
  if (c.variant != "gpu" || !c.smoke.ok() || c.smoke.hardware()) return s;
  smoke::HostKind host = c.smoke.evidence ? c.smoke.evidence->host : smoke::HostKind::none;
  if (host == smoke::HostKind::test_double) return s + " (test double)";
  if (host == smoke::HostKind::hardware) return s + " (unbound)";
  return s + " (no GPU)";
}

std::vector<StepView> steps_of(const NightlyCell& c) {
  return {{"build",
           to_string(c.build.status),
           c.build.ok(),
           false,
           c.build.seconds,
           c.build.error,
           {{"attempts", c.build.attempts}, {"log", c.build.log}, {"error", c.build.error}}},
          {"smoke", smoke_status_text(c), c.smoke.ok(), c.smoke.status == SmokeStatus::skipped, c.smoke.seconds,
           c.smoke.error, c.smoke},
          {"gate",
           to_string(c.gate.status),
           c.gate.ok(),
           c.gate.status == GateStatus::skipped,
           c.gate.seconds,
           c.gate.error,
           {{"failed", c.gate.failed}, {"error", c.gate.error}}},
          {"publish",
           to_string(c.publish.status),
           c.publish.ok(),
           c.publish.status == PublishStatus::skipped,
           c.publish.seconds,
           c.publish.error,
           {{"ref", c.publish.ref}, {"digest", c.publish.digest}, {"error", c.publish.error}}}};
}

long long cell_bytes(const NightlyCell& c) {
  long long n = 0;
  for (auto& l : c.layers) n += l.size;
  return n;
}

std::string size_of(const NightlyCell& c) { return c.layers.empty() ? "" : human_bytes(cell_bytes(c)); }

std::string md_row(const NightlyCell& c) {
  std::string row = "| " + escape_md(c.tag) + " |";
  for (auto& s : steps_of(c)) row += " " + s.status + " |";
  return row + " " + size_of(c) + " | " + escape_md(c.publish.digest.substr(0, 19)) + " | " + escape_md(c.problem()) +
         " |\n";
}

// What the KB check found, in words ("not checked" being the default: the nightly stays offline).
std::string kb_verdict(const KbState& k) {
  std::string where = k.index.empty() ? "PyPI and Paddle's index" : k.index;
  std::string unread = k.errors.empty() ? "" : "; " + std::to_string(k.errors.size()) + " page(s) not read";
  switch (k.check) {
    case KbCheckStatus::up_to_date:
      return "up to date with " + where;
    case KbCheckStatus::stale:
      return std::to_string(k.stale.size()) + " release(s) on " + where + " that the KB lacks" + unread;
    case KbCheckStatus::incomplete:
      return "nothing stale on the pages of " + where + " read" + unread;
    case KbCheckStatus::error:
      return "not checked: " + (k.errors.empty() ? std::string("?") : k.errors.front());
    case KbCheckStatus::not_checked:
      break;
  }
  return "staleness not checked (nightly --kb-check reads the package indexes)";
}

// "knowledge base 2026.11.3+sha256:…, released 2026-11-26, 24 day(s) old: <verdict>"
std::string kb_line(const KbState& k) {
  if (k.version.empty()) return "knowledge base: not recorded";
  return "knowledge base " + k.version + ", released " + k.released + ", " + std::to_string(k.age_days) +
         " day(s) old: " + kb_verdict(k);
}

// The KB check's lines: each stale release, each page not read (the error is in the summary line).
std::vector<std::string> kb_rows(const KbState& k) {
  std::vector<std::string> rows;
  for (auto& l : k.stale) rows.push_back("stale: " + l);
  if (k.check != KbCheckStatus::error)
    for (auto& e : k.errors) rows.push_back("not read: " + e);
  return rows;
}

void copy_file_if_there(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (!from.empty() && fs::exists(from, ec)) fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
}

// The build log a cell of the report folder `dir` names, as the file of that name in `dir`/logs/
// once every symlink is resolved; "" when there is none there. A report folder is input (a
// shard's artefact): its `log` is a name to look up, never a path to follow (/etc/passwd, or a
// logs/ entry linking out of the folder, is not read).
fs::path log_in_report(const fs::path& dir, const std::string& log) {
  fs::path name = fs::path(log).filename();
  if (name.empty() || name == "." || name == "..") return {};
  std::error_code ec;
  fs::path logs = fs::canonical(dir / "logs", ec);
  if (ec) return {};
  fs::path real = fs::canonical(logs / name, ec);
  if (ec || real.parent_path() != logs || !fs::is_regular_file(real, ec)) return {};
  return real;
}

// Each cell's log re-pointed at its copy inside the report folder `dir` (or none), so
// write_report copies only files from there.
void logs_from_report(NightlyReport& r, const fs::path& dir) {
  for (auto& c : r.cells) c.build.log = c.build.log.empty() ? "" : log_in_report(dir, c.build.log).string();
}

// Every cell's tag: it names files (logs/<tag>.log, <tag>.json) and reaches terminals and XML.
void check_tags(const fs::path& file, const NightlyReport& r) {
  for (auto& c : r.cells)
    if (!refname::is_tag(c.tag))
      throw InputError(file.string() + ": cell tag: expected a Docker tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}), found " +
                       strings::quoted(c.tag));
}

}  // namespace

std::string render_svg_chart(const NightlyCell& cell) {
  const auto& tp = cell.smoke.throughput;
  if (tp.empty()) {
    std::string why = cell.smoke.status == SmokeStatus::skipped ? "smoke did not run"
                                                                : "no throughput measured (GPU part did not run)";
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"640\" height=\"28\"><text x=\"4\" "
           "y=\"18\" "
           "fill=\"#666\">" +
           xml_escape(why) + "</text></svg>";
  }
  // Series grouped by the device they were measured on (a header row whenever it changes), so a
  // test double's or a CPU's figures are never read as a GPU's.
  int row = 40, header = 20, width = 640, y = 4;
  std::ostringstream body;
  std::string device = "\x01";
  for (auto& t : tp) {
    const std::string& dev = t.gpu;
    if (dev != device) {
      device = dev;
      body << "<text class=\"device\" x=\"4\" y=\"" << y + 14 << "\" fill=\"#444\" font-weight=\"bold\">"
           << xml_escape(dev.empty() ? "device not recorded" : dev) << "</text>";
      y += header;
    }
    body << metric_svg(t, y, width, row - 10);
    y += row;
  }
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" << width << "\" height=\"" << y + 4
    << "\" font-family=\"sans-serif\" font-size=\"12\">" << body.str() << "</svg>";
  return s.str();
}

namespace {

std::string log_name(const NightlyCell& c) {
  return c.build.log.empty() ? "" : fs::path(c.build.log).filename().string();
}

// The layers more than one cell carries (the matrix's shared bytes).
std::vector<SharedLayer> shared_layers(const MatrixLayers& m) {
  std::vector<SharedLayer> out;
  for (auto& l : m.layers)
    if (l.cells.size() > 1) out.push_back(l);
  return out;
}

std::string matrix_line(const MatrixLayers& m) {
  size_t shared = shared_layers(m).size();
  return std::to_string(m.cells) + " published cell(s), " + std::to_string(m.layers.size()) + " distinct layer(s), " +
         std::to_string(shared) + " shared: a pull of the whole matrix costs " + human_bytes(m.unique_bytes) + " (" +
         human_bytes(m.total_bytes) + " if every cell were pulled on its own)";
}

// Above the cells when a gpu cell was published without a real GPU having run it.
const char* const kNoHardware =
    "These GPU tags carry no hardware evidence: their GPU part never ran on a real GPU (promote refuses them "
    "until a GPU host's smoke is attested, or --allow-without-gpu-smoke is recorded):";

// The smoke and gate rows of a cell, as (summary, lines) pairs: what the collapsed rows show.
std::vector<std::pair<std::string, std::vector<std::string>>> check_rows(const NightlyCell& c) {
  std::vector<std::string> smoke = c.smoke.reasons;
  for (auto& w : c.smoke.warnings) smoke.push_back("warning: " + w);
  if (!c.smoke.error.empty()) smoke.push_back("error: " + c.smoke.error);
  if (!c.smoke.source.empty()) smoke.push_back("source: " + c.smoke.source);
  if (std::string e = c.smoke.evidence_summary(); !e.empty()) smoke.push_back("evidence: " + e);
  std::vector<std::string> gate = c.gate.failed;
  if (!c.gate.error.empty()) gate.push_back("error: " + c.gate.error);
  auto summary = [](const std::string& step, const std::string& status, size_t reasons, size_t warnings) {
    return step + ": " + status + " — " + std::to_string(reasons) + " reason(s), " + std::to_string(warnings) +
           " warning(s)";
  };
  return {{summary("smoke", to_string(c.smoke.status), c.smoke.reasons.size(), c.smoke.warnings.size()), smoke},
          {summary("gate", to_string(c.gate.status), c.gate.failed.size(), 0), gate}};
}

void md_cell(std::ostream& s, const NightlyCell& c, const std::string& previous) {
  s << "\n## " << c.tag << "\n\n- image: `" << c.image << "` (" << c.image_id.substr(0, 19)
    << (c.built_image_id.empty() ? "" : ", normalized from the build's " + c.built_image_id.substr(0, 19))
    << ")\n- inputs hash: `" << c.inputs_hash << "`, KB " << c.kb_version << ", base `" << c.base
    << "`\n- build: " << to_string(c.build.status) << " in " << fixed(c.build.seconds) << " s, log "
    << (log_name(c).empty() ? "(none)" : "[" + log_name(c) + "](logs/" + log_name(c) + ")") << "\n";
  for (auto& [summary, lines] : check_rows(c)) {
    s << "- " << summary;
    for (auto& l : lines) s << "\n  - " << l;
    s << "\n";
  }
  s << "- publish: " << to_string(c.publish.status) << ' ' << c.publish.ref << ' ' << c.publish.digest << ' '
    << c.publish.error << "\n";
  if (!c.layers.empty()) s << "- size: " << size_of(c) << " in " << c.layers.size() << " layer(s)\n";
  if (!c.reproduce.outcome.empty()) {  // nightly --reproduce: rebuilt with --no-cache, compared
    s << "- reproduce: " << c.reproduce.outcome << " (rebuilt with --no-cache in " << fixed(c.reproduce.seconds)
      << " s)";
    for (const auto& l : strings::split_lines(c.reproduce.detail)) s << "\n  - " << escape_md(l);
    s << "\n";
  }
  if (!c.promote.empty()) s << "- staged; release with: `" << c.promote << "`\n";
  s << "- changes since " << (previous.empty() ? "the previous run" : previous) << ":";
  for (auto& ch : c.changes) s << "\n  - " << escape_md(ch);
  s << "\n";
  for (auto& t : c.smoke.throughput)
    s << "- throughput " << escape_md(t.metric) << ": " << json(t.value).dump() << ' ' << escape_md(t.unit) << " ("
      << smoke::verdict_word(t.status) << ")" << (t.gpu.empty() ? "" : " on " + escape_md(t.gpu)) << "\n";
}

void html_details(std::ostream& s, const std::string& summary, const std::vector<std::string>& lines) {
  s << "<details><summary>" << xml_escape(summary) << "</summary><ul>";
  for (auto& l : lines) s << "<li>" << xml_escape(l) << "</li>";
  s << "</ul></details>";
}

void html_layers(std::ostream& s, const NightlyCell& c) {
  if (c.layers.empty()) return;
  s << "<details class=\"layers\"><summary>size " << size_of(c) << " in " << c.layers.size()
    << " layer(s)</summary><table><tr><th>#</th><th>layer</th><th>size</th></tr>";
  for (size_t i = 0; i < c.layers.size(); ++i)
    s << "<tr><td>" << i + 1 << "</td><td><code>" << xml_escape(c.layers[i].digest.substr(0, 19)) << "</code></td><td>"
      << human_bytes(c.layers[i].size) << "</td></tr>";
  s << "</table></details>";
}

void html_cell(std::ostream& s, const NightlyCell& c, const std::string& previous) {
  s << "<section class=\"cell\" id=\"cell-" << xml_escape(c.tag) << "\"><h2>" << xml_escape(c.tag)
    << "</h2><p>image <code>" << xml_escape(c.image) << "</code> (" << xml_escape(c.image_id.substr(0, 19)) << "), KB "
    << xml_escape(c.kb_version) << ", base <code>" << xml_escape(c.base) << "</code>";
  if (!log_name(c).empty()) s << ", <a href=\"logs/" << xml_escape(log_name(c)) << "\">build log</a>";
  if (!c.promote.empty())
    s << "</p><p>staged; release with: <code class=\"promote\">" << xml_escape(c.promote) << "</code>";
  s << "</p><p>changes since " << xml_escape(previous.empty() ? "the previous run" : previous)
    << ":</p><ul class=\"changes\">";
  for (auto& ch : c.changes) s << "<li>" << xml_escape(ch) << "</li>";
  s << "</ul>";
  for (auto& [summary, lines] : check_rows(c)) html_details(s, summary, lines);
  html_layers(s, c);
  s << "<p>throughput (this run last; dashed: floor)</p>" << render_svg_chart(c) << "</section>";
}

void html_matrix_layers(std::ostream& s, const NightlyReport& r) {
  MatrixLayers m = matrix_layers(r);
  if (m.cells == 0) return;
  s << "<h2 id=\"layers\">Layers across the matrix</h2><p>" << xml_escape(matrix_line(m)) << "</p>";
  auto shared = shared_layers(m);
  if (shared.empty()) return;
  s << "<table class=\"shared\"><tr><th>shared layer</th><th>size</th><th>cells</th></tr>";
  for (auto& l : shared)
    s << "<tr><td><code>" << xml_escape(l.layer.digest.substr(0, 19)) << "</code></td><td>" << human_bytes(l.layer.size)
      << "</td><td>" << l.cells.size() << ": " << xml_escape(strings::join(l.cells, ", ")) << "</td></tr>";
  s << "</table>";
}

}  // namespace

std::string render_markdown(const NightlyReport& r) {
  std::ostringstream s;
  std::string shards;
  for (auto& sh : r.shards) shards += (shards.empty() ? "" : ", ") + sh;
  s << "# imgtool nightly — " << r.matrix << "\n\n"
    << headline(r) << "  \n"
    << "registry `" << r.registry << "`"
    << (r.release.empty() ? "" : " (staging; releases go to `" + r.release + "` by promotion)") << ", shard(s) "
    << shards << ", builder " << r.builder << ", gpus `" << r.gpus << "`\n\n";
  s << kb_line(r.kb) << "\n\n";
  if (auto lines = r.without_hardware_evidence(); !lines.empty()) {
    s << "**" << escape_md(kNoHardware) << "**\n\n";
    for (auto& l : lines) s << "- " << escape_md(l) << "\n";
    s << "\n";
  }
  s << "| cell | build | smoke | gate | publish | size | digest | problem |\n|---|---|---|---|---|---|---|---|\n";
  for (auto& c : r.cells) s << md_row(c);
  MatrixLayers m = matrix_layers(r);
  if (m.cells > 0) s << "\n## Layers across the matrix\n\n" << matrix_line(m) << "\n";
  if (auto rows = kb_rows(r.kb); !rows.empty()) {
    s << "\n## Knowledge base\n\n";
    for (auto& row : rows) s << "- " << escape_md(row) << "\n";
  }
  if (auto shared = shared_layers(m); !shared.empty()) {
    s << "\n| shared layer | size | cells |\n|---|---|---|\n";
    for (auto& l : shared)
      s << "| `" << l.layer.digest.substr(0, 19) << "` | " << human_bytes(l.layer.size) << " | " << l.cells.size()
        << ": " << escape_md(strings::join(l.cells, ", ")) << " |\n";
  }
  for (auto& c : r.cells) md_cell(s, c, r.previous);
  return strings::printable_lines(s.str());  // every field, escaped or not, shown printable
}

std::string render_html(const NightlyReport& r) {
  std::ostringstream s;
  s << "<!doctype html><html><head><meta charset=\"utf-8\"><title>imgtool nightly</title><style>"
       "body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse}td,th{border:1px solid "
       "#ccc;"
       "padding:4px 8px}.ok{color:#2ca02c}.bad{color:#d62728}td code{word-break:break-all}details{margin:.3em 0}"
       "section.cell{border-top:1px solid "
       "#ddd;margin-top:1.5em}svg.chart{max-width:100%;height:auto}</style></head><body>";
  s << "<h1>imgtool nightly — " << xml_escape(r.matrix) << "</h1><p>" << xml_escape(headline(r)) << "<br>registry "
    << xml_escape(r.registry)
    << xml_escape(r.release.empty() ? "" : " (staging; releases go to " + r.release + " by promotion)") << ", builder "
    << xml_escape(r.builder) << ", gpus " << xml_escape(r.gpus) << "</p>";
  s << "<p class=\"kb\">" << xml_escape(kb_line(r.kb)) << "</p>";
  if (auto lines = r.without_hardware_evidence(); !lines.empty()) {
    s << "<p class=\"bad\" id=\"no-hardware\"><b>" << xml_escape(kNoHardware) << "</b></p><ul class=\"no-hardware\">";
    for (auto& l : lines) s << "<li>" << xml_escape(l) << "</li>";
    s << "</ul>";
  }
  s << "<table "
       "class=\"summary\"><tr><th>cell</th><th>build</th><th>smoke</th><th>gate</th><th>publish</th><th>size</th>"
       "<th>digest</th><th>problem</th></tr>";
  for (auto& c : r.cells) {
    s << "<tr class=\"" << (c.ok() ? "ok" : "bad") << "\"><td><a href=\"#cell-" << xml_escape(c.tag) << "\">"
      << xml_escape(c.tag) << "</a></td>";
    for (auto& step : steps_of(c)) s << "<td>" << xml_escape(step.status) << "</td>";
    s << "<td>" << size_of(c) << "</td><td><code>" << xml_escape(c.publish.digest.substr(0, 19)) << "</code></td><td>"
      << xml_escape(c.problem()) << "</td></tr>";
  }
  s << "</table>";
  if (auto rows = kb_rows(r.kb); !rows.empty()) {
    s << "<h2 id=\"kb\">Knowledge base</h2><ul class=\"kb-stale\">";
    for (auto& row : rows) s << "<li>" << xml_escape(row) << "</li>";
    s << "</ul>";
  }
  html_matrix_layers(s, r);
  for (auto& c : r.cells) html_cell(s, c, r.previous);
  s << "</body></html>\n";
  return strings::printable_lines(s.str());  // xml_escape covers each field; this, whatever was not
}

std::string render_junit(const NightlyReport& r) {
  junit::Suite suite{"imgtool-nightly", r.seconds, {}};
  for (auto& c : r.cells)
    for (auto& step : steps_of(c)) {
      junit::Outcome o = step.skipped ? junit::Outcome::kSkipped
                         : step.ok    ? junit::Outcome::kPassed
                                      : junit::Outcome::kFailed;
      std::string message = o == junit::Outcome::kSkipped  ? step.error
                            : o == junit::Outcome::kFailed ? c.problem()
                                                           : "";
      std::string body =
          o == junit::Outcome::kFailed ? step.detail.dump(2, ' ', false, json::error_handler_t::replace) : "";
      suite.cases.push_back({"nightly." + c.tag, step.name, step.seconds, o, message, body});
    }
  return junit::render(suite);
}

void write_report(const fs::path& dir, const NightlyReport& r) {
  fs::create_directories(dir / "logs");
  for (auto& c : r.cells) copy_file_if_there(c.build.log, dir / "logs" / fs::path(c.build.log).filename());
  write_file_atomic(dir / "nightly.json", json(r).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  write_file_atomic(dir / "report.md", render_markdown(r));
  write_file_atomic(dir / "report.html", render_html(r));
  write_file_atomic(dir / "junit.xml", render_junit(r));
}

NightlyReport read_report(const fs::path& dir) {
  fs::path file = dir / "nightly.json";
  if (!fs::exists(file))
    throw InputError(dir.string() + ": expected a nightly report folder (nightly.json), found none");
  json j = read_json_file(file, "a nightly report");  // names file:line:col of a syntax error
  NightlyReport r;
  try {
    r = j.get<NightlyReport>();
  } catch (const InputError& e) {
    throw InputError(file.string() + ": " + e.what());
  } catch (const json::exception& e) {
    throw InputError(file.string() + ": expected a nightly report, found " + e.what());
  }
  check_tags(file, r);
  logs_from_report(r, dir);
  return r;
}

NightlyReport merge_reports(const std::vector<fs::path>& dirs, const fs::path& out) {
  NightlyReport merged;
  std::set<std::string> tags;
  for (auto& d : dirs) {
    NightlyReport r = read_report(d);
    merged.matrix = r.matrix, merged.registry = r.registry, merged.builder = r.builder, merged.gpus = r.gpus;
    if (!r.release.empty() && !merged.release.empty() && r.release != merged.release)
      throw InputError((d / "nightly.json").string() + ": release '" + r.release + "', another shard's is '" +
                       merged.release + "'; expected one release registry for every shard");
    if (!r.release.empty()) merged.release = r.release;  // what `nightly promote` reads
    if (merged.started.empty() || (!r.started.empty() && r.started < merged.started))
      merged.started = r.started;  // the earliest shard: collected documents must be newer
    if (merged.kb.version.empty() ||
        (merged.kb.check == KbCheckStatus::not_checked && r.kb.check != KbCheckStatus::not_checked))
      merged.kb = r.kb;  // every shard plans with one KB; a shard that checked it says more
    merged.shards.insert(merged.shards.end(), r.shards.begin(), r.shards.end());
    merged.docker_builds += r.docker_builds;
    merged.seconds = std::max(merged.seconds, r.seconds);
    for (auto& c : r.cells) {
      if (!tags.insert(c.tag).second)
        throw InputError((d / "nightly.json").string() + ": cell '" + c.tag +
                         "' is also in another shard's report; "
                         "expected disjoint shards (same --shard n, different i)");
      merged.cells.push_back(c);
    }
  }
  std::sort(merged.cells.begin(), merged.cells.end(), [](auto& a, auto& b) { return a.tag < b.tag; });
  write_report(out, merged);  // each cell's log from its own shard folder's logs/ (read_report)
  return merged;
}

}  // namespace imgtool::nightly
