// The Dockerfile generator: one folder per kept matrix cell.
//
//   <out>/<tag>/Dockerfile    rendered from dockerfiles/<template_name>.Dockerfile.in
//   <out>/<tag>/cell.json     {"cell": <Cell>, "inputs_hash": "sha256:…", "kb_version": "…",
//                              "build": {"stage": "build", "stage_key": "<12 hex>"},
//                              "labels": {every label the Dockerfile sets}}  (cell_file.h)
//   <out>/<tag>/inputs.txt    the manifest the inputs hash is taken over (why a hash changed)
//   <out>/<tag>/wheels/…      context files the Dockerfile copies (offline cells)
//   <out>/<tag>/requirements.lock  their hash lock (context.h wheel_lock): pip --require-hashes
//   <out>/.imgtool-generated  marks <out> as ours (we only ever replace such a folder)
//
// The inputs hash covers everything that determines the image: the bytes of
// every template file used (template, partials, labels.tsv), the rendered
// Dockerfile minus its inputs-hash line, the base reference and digest, the
// pip pin and index, each context file's sha256, the hash lock, and the KB version.
// Deterministic: identical inputs give byte-identical folders (no clocks, no
// host paths in the Dockerfile; files and keys in sorted order).
//
// All or nothing: the whole <out> is built in a staging folder beside it and
// renamed into place at the end; any error (bad cell, lint finding, unknown
// placeholder) leaves <out> as it was.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "dockerfiles/cell_file.h"
#include "dockerfiles/context.h"
#include "dockerfiles/template.h"
#include "matrix/cell.h"

namespace imgtool::dockerfiles {

struct GenerateOptions {
  std::filesystem::path out_dir;        // replaced as a whole; must be new, empty, or ours
  std::filesystem::path templates_dir;  // empty = <data_dir()>/dockerfiles
  std::string kb_version;               // recorded in labels, cell.json and the hash
  // The KB's `released` day (YYYY-MM-DD): the cells' SOURCE_DATE_EPOCH (that day, 00:00 UTC), set for
  // the final stage's RUN lines and labelled io.imgtool.source-date-epoch. "" = none.
  std::string kb_released;
};

// One cell rendered in memory (nothing written yet).
struct RenderedCell {
  matrix::Cell cell;
  std::string dockerfile;       // final text, with the inputs-hash label
  std::string inputs_manifest;  // what the hash is taken over (inputs.txt)
  std::string inputs_hash;      // "sha256:<hex>" of inputs_manifest
  std::vector<ContextFile> context;
  CellFile file;          // cell.json as the struct the builder reads (cell_file.h)
  std::string cell_json;  // cell.json text: `file` written out
  // identity.json: the image's own identity, COPYed to /etc/imgtool/identity.json (the probe reports
  // it; smoke/binding.h holds it against the labels): {"tag", "kb_version", "claims": {field: value}}.
  std::string identity_json;
  std::string wheel_lock;  // requirements.lock (offline cells; "" for an index cell)
};

// The identity file's text for an image with these labels (one function for the generator and tests).
std::string identity_json(const std::map<std::string, std::string>& labels);

// Renders and lints one cell. InputError on a bad cell, an unknown
// placeholder (file:line), or lint findings (one "file:line: …" per line).
RenderedCell render_cell(const matrix::Cell& cell, const TemplateDir& templates, const std::string& kb_version,
                         const std::string& kb_released = "");

struct GeneratedCell {
  std::string tag;
  std::filesystem::path dir;  // final folder
  std::string inputs_hash;
  size_t context_files = 0;
  size_t hard_linked = 0;             // of context_files; the rest were copied
  std::vector<std::string> warnings;  // the cell's warnings, passed on
  CellFile file;                      // what its cell.json says: the builder takes it in memory
};

// Generates every cell into opt.out_dir (see the header comment). InputError
// on duplicate tags, on an empty cell list, or when out_dir exists, is not
// empty and was not made by generate().
std::vector<GeneratedCell> generate(const std::vector<matrix::Cell>& cells, const GenerateOptions& opt);

// A cell that could not be rendered (e.g. no wheel for it in the wheelhouse).
struct GenerateFailure {
  matrix::Cell cell;
  std::string reason;  // the InputError's one line
};

struct GenerateOutcome {
  std::vector<GeneratedCell> generated;
  std::vector<GenerateFailure> failed;
};

// For `build` and `nightly`: as generate(), but a cell that cannot be rendered
// fails alone — it is left out of opt.out_dir and reported, the others are
// generated. (`imgtool generate` stays strict: generate() above.) When no cell
// renders, nothing is written.
GenerateOutcome generate_each(const std::vector<matrix::Cell>& cells, const GenerateOptions& opt);

}  // namespace imgtool::dockerfiles
