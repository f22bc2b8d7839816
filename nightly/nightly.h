// The nightly pipeline:
//   plan → generate → build (build_driver.h, -j at a time) → every built cell's smoke, one at a
//   time → per smoked cell, -j at a time: release gate (claims vs contents, as `promote`) →
//   (only if both passed) push by digest → sign → move tag.
// A tag therefore never names an image that failed its smoke or its gate, or
// is unsigned.
// Smokes run alone, after the builds and before any gate or push, so throughput
// numbers are not measured under the load of other cells; gates and publishes
// (docker save, uploads: mostly I/O) of different cells overlap.
//
// Incremental: a cell whose image is up to date and whose smoke passed for
// that image ID (same --gpus) reuses the verdict ("cached"); a cell whose
// tag in the registry already names the digest published for that image ID
// is "unchanged" (one HEAD request); a passed release gate is reused for the
// same image ID + tag + KB version ("cached": the gate reads only that image's
// contents). A nightly with nothing changed thus runs no docker build, no smoke,
// no gate and no push. --fresh-smoke re-runs the smoke and the gate.
//
// The report also carries the KB's version, released day and age, and with --kb-check what the
// package indexes have that the KB lacks (nightly_kb.h; first, before any build).
//
// Report model: nightly_model.h (NightlyReport ↔ nightly.json); report.h renders it.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "builder/build_driver.h"
#include "nightly/nightly_kb.h"  // KbCheckOptions (--kb-check, --kb-index)
#include "nightly/nightly_model.h"
#include "nightly/nightly_steps.h"
#include "nightly/shard.h"  // Shard, parse_shard, select_shard (--shard i/n)

namespace imgtool::nightly {

struct NightlyOptions {
  builder::BuildOptions build;  // jobs, log_dir, timeout, retries, on_event
  image::Reference target;      // the registry namespace the cells are published into (parse_registry)
  Shard shard;
  std::string matrix;         // for the report's title
  std::string gpus = "none";  // the smoke's settings (smoke::settings_key): for the report and the smoke cache key
  bool fresh_smoke = false;
  std::string today;  // YYYYMMDD of the dated nightly tags (nightly_tag.h) and the KB's age; empty = today, UTC
  KbCheckOptions kb;  // the report's KB section; kb.check (off by default) reads the package indexes
};

// Runs the pipeline over `cells` (already sharded) and returns the report
// model. Never throws for a failing cell; `steps` may be null, in which case
// smoke and publish are reported as errors with `steps_missing` as the reason.
NightlyReport run_nightly(const std::vector<builder::GeneratedCell>& cells, const NightlyOptions& opt,
                          engine::Engine& docker, builder::StateStore& store, NightlySteps* steps,
                          const std::string& steps_missing = "");

// `nightly --stage-repository`: the run published into `stage`; a release is a promotion, never a
// rebuild, so each published cell gets the `imgtool promote … --to` command that moves its digest
// into the same repository under `release` (the report shows it; nothing is tagged there).
void stage_promotions(NightlyReport& report, const image::Reference& stage, const image::Reference& release);

}  // namespace imgtool::nightly
