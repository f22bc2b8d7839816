// The nightly report: one JSON document (the model) rendered to Markdown,
// HTML (with an inline-SVG throughput chart per cell) and JUnit XML. Shard
// reports are merged at the JSON level, then rendered again.
//
// Report folder:
//   nightly.json  the model (see nightly.h for its fields)
//   report.md     summary table + per-cell detail
//   report.html   the same, with throughput charts
//   junit.xml     one testcase per cell and step (build, smoke, publish)
//   logs/<tag>.log  the cells' build logs
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace imgtool::builder {

namespace fs = std::filesystem;

std::string render_markdown(const nlohmann::json& report);
std::string render_html(const nlohmann::json& report);
std::string render_junit(const nlohmann::json& report);
// The chart of one cell's throughput (its metrics and their history).
std::string render_svg_chart(const nlohmann::json& cell);

// Writes all four files (each atomically) into `dir`, creating it.
void write_report(const fs::path& dir, const nlohmann::json& report);

// Joins shard reports (each a folder with nightly.json). InputError when a
// folder has no report or two shards report the same tag.
nlohmann::json merge_reports(const std::vector<fs::path>& dirs);

}  // namespace imgtool::builder
