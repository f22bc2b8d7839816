// The build driver: turns generated cell folders into local images.
//
// For each cell: up to date (the local image carries label
// io.imgtool.inputs-hash equal to the cell's hash AND the state store
// recorded a good build of that hash) → nothing runs; otherwise one
// `docker build` of the cell folder, retried only on transient failures
// (failure_kind.h), with a timeout and a log file <state>/logs/<tag>.log.
// With normalize, an up-to-date image must also be the normalized one (created = the cell's epoch).
// Builds run on a pool of `jobs` threads, shared base stages first
// (stage_plan.h). A failed cell never stops the others; the report has one
// row per cell. Every docker call goes through the run's engine (engine/engine.h).
//
// Stages do not outlive the run (unless keep_stages): the classic builder leaves
// each cell's first stage (its wheels and venv: GBs for a GPU cell) as an untagged
// image. Each build passes a fresh mark (--build-arg IMGTOOL_BUILD_STAGE, the
// template's label io.imgtool.build-stage); once the cell's image is made, the
// untagged images with its mark go, and a group's shared stage
// (imgtool-stage/<key>:<stage>) goes when the run ends. keep_stages keeps both as
// the engine's layer cache, for a host that rebuilds often and has the disk.
#pragma once
#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "builder/build_progress.h"
#include "builder/generated_cell.h"
#include "builder/state_store.h"
#include "engine/engine.h"
#include "image/normalize.h"
#include "matrix/labels.h"

namespace imgtool::builder {

inline constexpr const char* kInputsHashLabel = labels::kInputsHash;

struct BuildOptions {
  int jobs = 1;                                   // parallel docker builds
  fs::path log_dir;                               // required: one <tag>.log per cell
  std::string image_prefix;                       // local name = prefix + repository + ":" + tag
  std::chrono::seconds timeout{3600};             // per docker build
  int max_attempts = 3;                           // 1 = no retry; only transient failures retry
  std::chrono::milliseconds retry_backoff{5000};  // before the 2nd attempt; doubled after each
  bool force = false;                             // build even when up to date
  bool keep_stages = false;                       // keep first stages as layer cache (see above)
  bool no_cache = false;                          // docker build --no-cache (a reproduction: every step runs)
  // Reproducible images (normalize_built.h): each built image normalized with its cell's
  // SOURCE_DATE_EPOCH and loaded back under its name; the copy passes through log_dir's parent.
  bool normalize = false;
  std::vector<image::NormalizeRule> normalize_rules;  // image/normalize_rules.tsv as read
  std::function<void(const std::string&)> on_event;   // progress lines (the library never prints)
  // A running build's step (build_progress.h); null = as plain lines through on_event.
  std::function<void(const ProgressEvent&)> on_progress;
};

enum class CellStatus { built, up_to_date, failed };
std::string to_string(CellStatus s);

struct CellBuild {
  std::string tag;
  std::string image;     // local name:tag
  std::string image_id;  // "sha256:…" (built or up to date; normalized when BuildOptions::normalize)
  std::string built_id;  // what docker build made, when it was normalized into image_id ("" otherwise)
  std::string inputs_hash;
  CellStatus status = CellStatus::failed;
  int attempts = 0;  // docker build invocations for this cell (0 when up to date)
  double seconds = 0;
  std::string log;          // path of the cell's log
  std::string error;        // why it failed: one line with the fix where known
  std::string stage_group;  // base key (stage_plan.h)
};

struct BuildReport {
  std::vector<CellBuild> cells;  // in input order
  int docker_builds = 0;         // every `docker build` run, stage builds and retries included
  std::string builder;           // "classic" | "buildkit"
  double seconds = 0;
  bool ok() const;
  int count(CellStatus s) const;
};

BuildReport build_cells(const std::vector<GeneratedCell>& cells, const BuildOptions& opt, engine::Engine& docker,
                        StateStore& store);

// The local image name of a cell.
std::string local_image(const matrix::Cell& c, const std::string& prefix);

// The per-cell summary table (fixed-width text) and its JSON.
std::string summary_table(const BuildReport& r);
nlohmann::json to_json(const BuildReport& r);

}  // namespace imgtool::builder
