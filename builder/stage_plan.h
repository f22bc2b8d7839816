// Building shared stages once. Cells that share their base stage form a
// group: for a multi-stage Dockerfile whose first stage is named (the
// generated template's `FROM <base> AS build`: OS + CUDA base, Python, the
// pinned Paddle wheel), cells whose first-stage text is identical; otherwise
// cells with the same base image, digest, os, python, cuda, cudnn. In each
// group the shared part is built first, alone, and the group's cells fan out
// only afterwards, so the classic builder's layer cache (keyed by parent
// layer + instruction + copied file checksums) is warm for all of them:
//   - multi-stage Dockerfile whose first stage is named (`FROM … AS base`):
//     that stage is built once with `--target base` and tagged
//     `imgtool-stage/<group key>:<stage>` (kept, so later runs hit it too);
//   - otherwise the group's first cell (the leader) is built first, and the
//     others reuse its common prefix of layers.
// Grouping only orders work; correctness never depends on it (the engine's
// cache decides what is reused), so a wrong guess costs time, never a wrong image.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "builder/generated_cell.h"

namespace imgtool::builder {

struct StageGroup {
  std::string key;            // 12 hex chars over the first stage's text (or the base fields)
  std::string stage;          // first named stage of the leader's Dockerfile, empty if none
  std::vector<size_t> cells;  // indexes into the cell list; cells[0] is the leader
  std::string stage_image() const { return "imgtool-stage/" + key + ":" + stage; }
};

// Groups in order of first appearance; cells keep their input order within a group.
std::vector<StageGroup> group_by_base(const std::vector<GeneratedCell>& cells);

// The group key of one cell: its named first stage's text, hashed; the base
// fields when the Dockerfile has no named first stage.
std::string base_key(const matrix::Cell& c, std::string_view dockerfile);

// The text of the first stage (up to the second FROM), or "" for a single stage.
std::string first_stage_text(std::string_view dockerfile);

// "base" for a Dockerfile whose first FROM is `FROM x AS base` and that has a
// later FROM; empty otherwise.
std::string first_named_stage(std::string_view dockerfile);

// Names declared by `ARG NAME[=default]` lines, in order.
std::vector<std::string> declared_args(std::string_view dockerfile);

}  // namespace imgtool::builder
