// cell.json, the generator -> builder contract for one rendered cell, as one struct: the
// generator writes it (to_json) and the builder reads it (from_json), so the two cannot drift.
//
//   {"cell": <matrix::Cell>, "inputs_hash": "sha256:…", "kb_version": "…",
//    "build": {"stage": "build", "stage_key": "<12 hex>"},          (stages.h; optional)
//    "labels": {"io.imgtool.tag": "…", …}}                           (optional)
//
// `labels` holds the bookkeeping labels the Dockerfile's final stage already sets (tag,
// kb-version, inputs-hash, stage-key): the builder passes only the others as --label (each one
// more classic-builder step) and never reads the Dockerfile. Checking the field values is the
// reader's job (builder/generated_cell.cc): a cell folder travels between CI steps.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "dockerfiles/stages.h"
#include "matrix/cell.h"

namespace imgtool::dockerfiles {

struct CellFile {
  matrix::Cell cell;
  std::string inputs_hash;  // "sha256:…"
  std::string kb_version;
  SharedStage build;
  std::map<std::string, std::string> labels;
};

void to_json(nlohmann::json& j, const CellFile& f);
// Throws nlohmann::json::exception on a missing or mistyped field (the reader names the file).
void from_json(const nlohmann::json& j, CellFile& f);

// The key that groups cells built on the same base: the shared stage's key when there is one,
// else 12 hex of sha256 over the cell's base, OS, Python, CUDA and cuDNN. `imgtool prune` keeps a
// stage image while a cell image names its key (io.imgtool.stage-key).
std::string group_key(const SharedStage& s, const matrix::Cell& c);

}  // namespace imgtool::dockerfiles
