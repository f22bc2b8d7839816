// The nightly report: the model (nightly_model.h) rendered to Markdown, HTML
// (with an inline-SVG throughput chart per cell) and JUnit XML. write_report
// and merge_reports own the whole report folder:
//
//   nightly.json    the model
//   report.md       the KB's age (and staleness, nightly --kb-check), summary table + per-cell detail
//   report.html     the same, with throughput charts
//   junit.xml       one testcase per cell and step (build, smoke, gate, publish)
//   logs/<tag>.log  the cells' build logs (copied from the state folder; a merge or
//                   collect copies each cell's log from its report folder's logs/ only)
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "nightly/nightly_model.h"

namespace imgtool::nightly {

namespace fs = std::filesystem;

std::string render_markdown(const NightlyReport& report);
std::string render_html(const NightlyReport& report);
std::string render_junit(const NightlyReport& report);
// The chart of one cell's throughput (its metrics and their history).
std::string render_svg_chart(const NightlyCell& cell);

// Writes the report folder `dir` (see above), creating it; each file atomically.
void write_report(const fs::path& dir, const NightlyReport& report);

// Reads `dir`/nightly.json; InputError naming the file when it is missing or not a report, or
// a cell's tag is not a Docker tag. The folder is input (a shard's artefact): each cell's build
// log becomes the file of that name in `dir`/logs/ (symlinks resolved, never out of that folder),
// or none — a path the report names elsewhere (/etc/passwd) is never read.
NightlyReport read_report(const fs::path& dir);

// Joins shard report folders and writes the merged folder `out` (logs
// included). InputError when a folder has no report or two shards report the
// same tag.
NightlyReport merge_reports(const std::vector<fs::path>& dirs, const fs::path& out);

}  // namespace imgtool::nightly
