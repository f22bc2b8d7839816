// Building shared stages once. Cells that share their base stage form a
// group: for a multi-stage Dockerfile whose first stage is named (the
// generated template's `FROM <base> AS build`: OS + CUDA base, Python, the
// pinned Paddle wheel), cells whose first-stage text is identical — the
// generator says so in cell.json (stage, stage_key; dockerfiles/stages.h), the
// builder never re-parses the Dockerfile; otherwise
// cells with the same base image, digest, os, python, cuda, cudnn. In each
// group the shared part is built first, alone, and the group's cells fan out
// only afterwards, so the classic builder's layer cache (keyed by parent
// layer + instruction + copied file checksums) is warm for all of them:
//   - multi-stage Dockerfile whose first stage is named (`FROM … AS base`):
//     that stage is built once with `--target base` and tagged
//     `imgtool-stage/<group key>:<stage>` (removed when the run ends; kept,
//     so later runs hit it too, with --keep-stages: build_driver.h);
//   - otherwise the group's first cell (the leader) is built first, and the
//     others reuse its common prefix of layers.
// Grouping only orders work; correctness never depends on it (the engine's
// cache decides what is reused), so a wrong guess costs time, never a wrong image.
#pragma once
#include <string>
#include <vector>

#include "builder/generated_cell.h"

namespace imgtool::builder {

struct StageGroup {
  std::string key;            // 12 hex chars over the first stage's text (or the base fields)
  std::string stage;          // first named stage of the leader's Dockerfile, empty if none
  std::vector<size_t> cells;  // indexes into the cell list; cells[0] is the leader
  std::string stage_image() const { return "imgtool-stage/" + key + ":" + stage; }
};

// Groups in order of first appearance; cells keep their input order within a
// group. A cell that could not be generated (generate_error) is in no group.
std::vector<StageGroup> group_by_base(const std::vector<GeneratedCell>& cells);

// The group key of one cell: the generator's stage_key (cell.json); the base
// fields, hashed, when the Dockerfile has no shared first stage.
std::string base_key(const GeneratedCell& g);

}  // namespace imgtool::builder
