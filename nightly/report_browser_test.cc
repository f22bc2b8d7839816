// The nightly report as a person sees it: rendered by a real browser (Debian's headless Chromium)
// to a PNG, and its laid-out DOM checked by a script the browser runs — every cell present, every
// chart drawn with a non-empty box, no page wider than the window, the check rows collapsed.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "nightly/report.h"
#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::builder;
using namespace imgtool::nightly;
using namespace imgtool::testing;
using json = nlohmann::json;

namespace {

constexpr int kWidth = 1100, kHeight = 2400;

json metric(const std::string& name, double value, const std::string& unit, const std::string& device,
            std::vector<double> history) {
  json h = json::array();
  for (size_t i = 0; i < history.size(); ++i) h.push_back({{"time", 1000 + i}, {"value", history[i]}});
  return {{"metric", name}, {"value", value},   {"unit", unit}, {"status", "ok"},
          {"gpu", device},  {"floor", nullptr}, {"history", h}};
}

NightlyCell cell(const std::string& tag, bool ok, json throughput, std::vector<LayerSize> layers) {
  NightlyCell c;
  c.tag = tag;
  c.image = "paddle-local:" + tag;
  c.image_id = "sha256:" + std::string(64, 'a');
  c.inputs_hash = "sha256:" + std::string(64, 'b');
  c.kb_version = "2026.11";
  c.base = "imgtool-base/cuda:11.8-cudnn8-runtime-bookworm";
  c.build = {CellStatus::built, 1, 61.5, "/state/logs/" + tag + ".log", ""};
  c.smoke = {.status = ok ? SmokeStatus::pass : SmokeStatus::fail,
             .seconds = 20,
             .reasons = ok ? std::vector<std::string>{}
                           : std::vector<std::string>{"paddle: CPU-only Paddle build in a gpu image"},
             .warnings = {"shm: /dev/shm is 64 MiB, below 1 GiB (fix: docker run --shm-size 2g)"},
             .throughput = throughput.get<std::vector<ThroughputPoint>>()};
  c.gate.status = ok ? GateStatus::pass : GateStatus::skipped;
  if (ok)
    c.publish = {PublishStatus::published,         4,     "127.0.0.1:5000/ai/paddle-local:" + tag,
                 "sha256:" + std::string(64, 'c'), "sig", ""};
  else
    c.publish.error = "smoke did not pass: the tag is not moved";
  c.layers = ok ? layers : std::vector<LayerSize>{};
  c.changes = {"inputs hash sha256:aaaa… → sha256:bbbb…", "packages (1): pypi/numpy 1.26.3 → 1.26.4"};
  return c;
}

NightlyReport sample() {
  LayerSize base{"sha256:" + std::string(64, '1'), 31 << 20}, cuda{"sha256:" + std::string(64, '2'), 2300LL << 20};
  NightlyReport r;
  r.matrix = "matrix/local.yaml";
  r.registry = "127.0.0.1:5000/ai";
  r.builder = "classic";
  r.gpus = "auto (GPU test double)";
  r.started = "2026-11-24T02:00:00Z";
  r.previous = "2026-11-23T02:00:00Z";
  r.shards = {"1/1"};
  // The KB section at its longest: stale releases with the file to edit, a page not read.
  r.kb = {.version = "2026.11.3+sha256:0ea87b18604a",
          .released = "2026-11-26",
          .age_days = 24,
          .check = KbCheckStatus::stale,
          .stale = {"paddlepaddle 3.4.0 (2026-12-01): a new series 3.4 (no release row) — "
                    "/usr/share/imgtool/matrix/kb/paddle.yaml",
                    "nvidia-cuda-runtime 13.6.20 (2026-12-10): newer than the KB's newest pin 13.5.37 — "
                    "/usr/share/imgtool/matrix/kb/cuda_wheels.yaml"},
          .errors = {
              "paddlepaddle-gpu (cu126): GET https://www.paddlepaddle.org.cn/packages/stable/cu126/paddlepaddle-gpu/: "
              "Could not resolve host: www.paddlepaddle.org.cn (a retry may help)"}};
  r.cells = {
      cell("3.2.0", true,
           json::array({metric("cpu_matmul_fp32", 41.2, "GFLOP/s", "cpu: AMD EPYC", {38, 40.5, 39.9}),
                        metric("cpu_bandwidth_copy", 9.1, "GB/s", "cpu: AMD EPYC", {8.8, 9.0})}),
           {base, {"sha256:" + std::string(64, '3'), 180 << 20}}),
      cell("2.6.2-gpu-cuda11.8-cudnn8.6", true,
           json::array({metric("bandwidth_copy", 7.5, "GB/s", "imgtool fake GPU (test double, not hardware)", {7.1}),
                        metric("bandwidth_triad", 6.9, "GB/s", "imgtool fake GPU (test double, not hardware)", {}),
                        metric("cpu_matmul_fp32", 40.1, "GFLOP/s", "cpu: AMD EPYC", {39.2})}),
           {base, cuda, {"sha256:" + std::string(64, '4'), 900 << 20}}),
      cell("3.2.0-gpu-cpuwheel", false, json::array(), {})};
  return r;
}

// Measured by the browser after layout; written into the page, read back with --dump-dom.
const char* kLayoutScript = R"(<script>
(function () {
  const box = e => { const r = e.getBoundingClientRect(); return {w: r.width, h: r.height, right: r.right}; };
  const out = {
    cells: [...document.querySelectorAll('section.cell h2')].map(h => h.textContent),
    summary_rows: document.querySelectorAll('table.summary tr').length - 1,
    charts: [...document.querySelectorAll('svg.chart')].map(s => ({
      box: box(s), polylines: [...s.querySelectorAll('polyline')].map(p => ({points: p.points.numberOfItems, box: box(p)})),
      points: [...s.querySelectorAll('circle')].map(c => box(c)),
      devices: [...s.querySelectorAll('text.device')].map(t => t.textContent)})),
    open_details: document.querySelectorAll('details[open]').length,
    details: document.querySelectorAll('details').length,
    page_width: document.documentElement.scrollWidth, window_width: window.innerWidth,
    widest_right: Math.max(...[...document.body.querySelectorAll('*')].map(e => e.getBoundingClientRect().right)),
  };
  const pre = document.createElement('pre');
  pre.id = 'imgtool-layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>)";

RunResult chromium(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {
      "chromium",      "--headless",        "--no-sandbox",
      "--disable-gpu", "--hide-scrollbars", "--window-size=" + std::to_string(kWidth) + "," + std::to_string(kHeight)};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {.timeout = std::chrono::seconds(120)});
}

}  // namespace

TEST_CASE("report.html in headless Chromium: every cell, charts drawn, nothing wider than the window, rows collapsed") {
  ScratchDir dir("report-browser");
  NightlyReport r = sample();
  write_report(dir.path, r);
  std::string html = read_file(dir.path / "report.html");
  CHECK(html.find("<ul class=\"kb-stale\"><li>stale: paddlepaddle 3.4.0") != std::string::npos);

  // The laid-out page, measured by the browser.
  std::string probe = html;
  probe.insert(probe.rfind("</body>"), kLayoutScript);
  write_file_atomic(dir.path / "layout.html", probe);
  auto dom = chromium({"--dump-dom", "file://" + (dir.path / "layout.html").string()});
  REQUIRE_MESSAGE(dom.ok(), dom.err);
  const std::string open = "<pre id=\"imgtool-layout\">";
  auto at = dom.out.find(open);
  REQUIRE_MESSAGE(at != std::string::npos, dom.out.substr(0, 2000));
  at += open.size();
  std::string text = dom.out.substr(at, dom.out.find("</pre>", at) - at);
  for (auto [from, to] :
       {std::pair<std::string, std::string>{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}})
    for (size_t p = 0; (p = text.find(from, p)) != std::string::npos; p += to.size()) text.replace(p, from.size(), to);
  json layout = json::parse(text);
  INFO(layout.dump(2));
  CHECK(layout["cells"] == json::array({"3.2.0", "2.6.2-gpu-cuda11.8-cudnn8.6", "3.2.0-gpu-cpuwheel"}));
  CHECK(layout["summary_rows"] == 3);
  REQUIRE(layout["charts"].size() == 3);
  for (int i : {0, 1}) {
    const json& chart = layout["charts"][i];
    CHECK(chart["box"]["w"].get<double>() > 300);
    CHECK(chart["box"]["h"].get<double>() > 40);
    CHECK(chart["polylines"].size() == r.cells[i].smoke.throughput.size());
    for (auto& p : chart["polylines"]) {
      CHECK(p["points"].get<int>() >= 1);
      if (p["points"].get<int>() >= 2) CHECK(p["box"]["w"].get<double>() > 100);  // a history: a line across
    }
    CHECK(chart["points"].size() == r.cells[i].smoke.throughput.size());  // this run's value: a dot per metric
    for (auto& c : chart["points"]) CHECK(c["w"].get<double>() > 0);
  }
  CHECK(layout["charts"][1]["devices"] ==
        json::array({"imgtool fake GPU (test double, not hardware)", "cpu: AMD EPYC"}));
  CHECK(layout["charts"][2]["polylines"].empty());  // the failed cell: a line saying why, no series
  CHECK(layout["details"].get<int>() >= 3 * 2);     // smoke and gate rows of every cell (+ layers)
  CHECK(layout["open_details"] == 0);               // collapsed
  CHECK(layout["page_width"].get<int>() <= layout["window_width"].get<int>());
  CHECK(layout["widest_right"].get<double>() <= kWidth);

  // What the browser drew: a page, not a blank one, with the charts' strokes on it.
  auto shot =
      chromium({"--screenshot=" + (dir.path / "report.png").string(), "file://" + (dir.path / "report.html").string()});
  REQUIRE_MESSAGE(fs::exists(dir.path / "report.png"), shot.err);
  if (const char* keep = std::getenv("IMGTOOL_KEEP_REPORT_PNG"))  // to look at it: IMGTOOL_KEEP_REPORT_PNG=/tmp/r.png
    fs::copy_file(dir.path / "report.png", keep, fs::copy_options::overwrite_existing);
  auto px =
      run({"python3", source_dir() + "/tests/png_pixels.py", (dir.path / "report.png").string(), "--color", "1f77b4"},
          {.timeout = std::chrono::seconds(300)});
  REQUIRE_MESSAGE(px.ok(), px.err);
  json pixels = json::parse(px.out);
  MESSAGE("report.png: " << pixels.dump());
  CHECK(pixels["width"] == kWidth);
  CHECK(pixels["height"] == kHeight);
  CHECK(pixels["nonwhite"].get<long>() > kWidth * kHeight / 100);
  CHECK(pixels["color"].get<long>() > 200);  // the series' blue strokes
}
