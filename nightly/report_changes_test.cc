// What changed since the last run, the matrix's layers, and how the report shows them.
#include "nightly/report_changes.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include "core/fs.h"
#include "nightly/report.h"

using namespace imgtool;
using namespace imgtool::builder;
using namespace imgtool::nightly;

namespace {

NightlyCell published(const std::string& tag, const std::string& digest, std::vector<LayerSize> layers,
                      std::map<std::string, std::string> packages) {
  NightlyCell c;
  c.tag = tag;
  c.image_id = "sha256:img-" + tag;
  c.inputs_hash = "sha256:in-" + tag;
  c.kb_version = "2026.11";
  c.base = "imgtool-base/debian:bookworm-py3";
  c.build = {CellStatus::built, 1, 3.0, "/state/logs/" + tag + ".log", ""};
  c.smoke.status = SmokeStatus::pass;
  c.smoke.warnings = {"shm: /dev/shm is 64 MiB"};
  c.gate.status = GateStatus::pass;
  c.publish = {PublishStatus::published, 1.0, "reg/ai/p:" + tag, digest, "sig", ""};
  c.layers = std::move(layers);
  c.packages = std::move(packages);
  return c;
}

NightlyReport run_of(std::vector<NightlyCell> cells, const std::string& started) {
  NightlyReport r;
  r.matrix = "m.yaml";
  r.started = started;
  r.cells = std::move(cells);
  return r;
}

bool has(const std::vector<std::string>& lines, const std::string& needle) {
  for (auto& l : lines)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

struct Dir {
  fs::path path = fs::temp_directory_path() / ("imgtool-report-changes-" + std::to_string(::getpid()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("compare_runs: inputs, KB, base, image, digest and package versions; new cells; unchanged cells") {
  auto before = run_of({published("a", "sha256:d1", {}, {{"pypi/numpy", "1.26.3"}, {"deb/zlib1g", "1.2"}}),
                        published("b", "sha256:d2", {}, {{"pypi/numpy", "1.26.4"}})},
                       "2026-11-22T02:00:00Z");
  auto a = published("a", "sha256:d9", {}, {{"pypi/numpy", "1.26.4"}, {"pypi/protobuf", "3.20.3"}});
  a.inputs_hash = "sha256:in-a2";
  a.kb_version = "2026.12";
  a.base = "imgtool-base/debian:bookworm-py3@sha256:abc";
  auto b = published("b", "sha256:d2", {}, {});  // not pushed again: same digest, no SBOM built tonight
  b.publish.status = PublishStatus::unchanged;
  auto c = published("c", "sha256:d3", {}, {});
  auto now = run_of({a, b, c}, "2026-11-23T02:00:00Z");
  compare_runs(now, before);
  CHECK(now.previous == "2026-11-22T02:00:00Z");
  auto& ca = now.cells[0].changes;
  CHECK(has(ca, "inputs hash sha256:in-a → sha256:in-a2"));
  CHECK(has(ca, "KB version 2026.11 → 2026.12"));
  CHECK(has(ca, "base imgtool-base/debian:bookworm-py3 → imgtool-base/debian:bookworm-py3@sha256:abc"));
  CHECK(has(ca, "published digest sha256:d1 → sha256:d9"));
  CHECK(has(ca, "packages (3): pypi/numpy 1.26.3 → 1.26.4; + pypi/protobuf 3.20.3; − deb/zlib1g 1.2"));
  CHECK(now.cells[1].changes == std::vector<std::string>{"unchanged"});
  CHECK(now.cells[1].packages.at("pypi/numpy") == "1.26.4");  // carried for the next comparison
  CHECK(now.cells[2].changes == std::vector<std::string>{"new cell (not in the previous run)"});
}

TEST_CASE(
    "compare_with_last_run: first run, then compared; other shards' cells remembered; a corrupt memory is no failure") {
  Dir d;
  auto first = run_of({published("a", "sha256:d1", {}, {})}, "t1");
  compare_with_last_run(first, d.path);
  CHECK(first.cells[0].changes == std::vector<std::string>{"first run (nothing to compare with)"});
  auto shard2 = run_of({published("b", "sha256:d2", {}, {})}, "t2");
  compare_with_last_run(shard2, d.path);
  CHECK(shard2.cells[0].changes == std::vector<std::string>{"new cell (not in the previous run)"});
  auto again = run_of({published("a", "sha256:d1", {}, {}), published("b", "sha256:d5", {}, {})}, "t3");
  compare_with_last_run(again, d.path);
  CHECK(again.previous == "t2");
  CHECK(again.cells[0].changes == std::vector<std::string>{"unchanged"});  // remembered across shard 2's run
  CHECK(has(again.cells[1].changes, "published digest sha256:d2 → sha256:d5"));
  write_file_atomic(d.path / "last-nightly.json", "{not json");
  auto after = run_of({published("a", "sha256:d1", {}, {})}, "t4");
  CHECK_NOTHROW(compare_with_last_run(after, d.path));
  CHECK(after.cells[0].changes == std::vector<std::string>{"first run (nothing to compare with)"});
}

TEST_CASE("matrix_layers: a shared layer is pulled once; sizes per cell and for the matrix") {
  LayerSize base{"sha256:base", 300 << 20}, py{"sha256:py", 20 << 20};
  auto r = run_of({published("a", "sha256:d1", {base, py, {"sha256:a", 10 << 20}}, {}),
                   published("b", "sha256:d2", {base, py, {"sha256:b", 1 << 20}}, {}),
                   published("c", "sha256:d3", {base, {"sha256:c", 2 << 20}}, {})},
                  "t");
  r.cells.push_back(NightlyCell{.tag = "failed"});  // not published: no layers, not counted
  MatrixLayers m = matrix_layers(r);
  CHECK(m.cells == 3);
  CHECK(m.layers.size() == 5);
  CHECK(m.layers[0].layer.digest == "sha256:base");
  CHECK(m.layers[0].cells == std::vector<std::string>{"a", "b", "c"});
  CHECK(m.unique_bytes == (300 + 20 + 10 + 1 + 2) * (1LL << 20));
  CHECK(m.total_bytes == (3 * 300 + 2 * 20 + 10 + 1 + 2) * (1LL << 20));
  CHECK(human_bytes(m.unique_bytes) == "333.0 MiB");
  CHECK(human_bytes(1536) == "1.5 KiB");
  CHECK(human_bytes(12) == "12 B");

  std::string html = render_html(r), md = render_markdown(r);
  CHECK(html.find("Layers across the matrix") != std::string::npos);
  CHECK(html.find("a pull of the whole matrix costs 333.0 MiB (953.0 MiB if every cell were pulled on its own)") !=
        std::string::npos);
  CHECK(html.find("<td>3: a, b, c</td>") != std::string::npos);
  CHECK(html.find("<td>330.0 MiB</td>") != std::string::npos);  // cell a's size in the summary
  CHECK(html.find("<a href=\"logs/a.log\">build log</a>") != std::string::npos);
  CHECK(html.find("<details><summary>smoke: pass — 0 reason(s), 1 warning(s)</summary>") != std::string::npos);
  CHECK(html.find("<a href=\"#cell-a\">a</a>") != std::string::npos);
  CHECK(md.find("| `sha256:base` | 300.0 MiB | 3: a, b, c |") != std::string::npos);
  CHECK(md.find("log [a.log](logs/a.log)") != std::string::npos);

  // One cell: nothing is shared, so no table of shared layers (only the line saying so).
  auto single = run_of({published("a", "sha256:d1", {base, py}, {})}, "t");
  CHECK(render_html(single).find("0 shared: a pull of the whole matrix costs 320.0 MiB") != std::string::npos);
  CHECK(render_html(single).find("shared layer") == std::string::npos);
  CHECK(render_markdown(single).find("| shared layer |") == std::string::npos);
}
