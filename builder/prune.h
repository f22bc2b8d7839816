// `imgtool prune`, the build-host half: what nightlies leave in the local
// Docker engine, and only what imgtool made (by its io.imgtool.* labels).
//
// Data model first:
//   PruneKind    what an item is (a local image, a registry tag or manifest…)
//   PruneItem    one thing that goes (or, kept, one that stays and why)
//   PruneReport  the items of a run; dry_run = nothing was removed
// The registry half (registry_prune.h) fills the same report.
//
// Engine rule (plan_engine_prune, a pure function of two listings):
//   - a cell image (label io.imgtool.tag) that still has a name is current:
//     kept; one left without a name (its tag moved to a rebuild) is dangling:
//     removed by ID — the classic builder's untagged intermediates under it
//     go with it (docker removes untagged parents);
//   - a shared-stage image (label io.imgtool.stage-of, named
//     imgtool-stage/<key>:<stage>, builder/stage_plan.h) is needed while a
//     named cell image carries its key (label io.imgtool.stage-key). A cell
//     image built before that label existed keeps the stage images whose
//     io.imgtool.stage-of names its tag (the group leader), so an upgrade
//     never drops a warm cache by mistake. An unneeded stage image is
//     untagged by name (imgtool-stage/… names only); a dangling one by ID.
//   - an untagged first stage of a cell (label io.imgtool.build-stage: one a
//     failed build or --keep-stages left, build_driver.h) is removed by ID;
//   - nothing without those labels is ever touched (a user's own images,
//     intermediates of failed builds that never reached a LABEL step).
// Removal failures (an image in use by a container) are recorded on the
// item and the others go on; the report is then not ok (exit 1).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace imgtool::builder {

enum class PruneKind { stage_image, dangling_image, nightly_tag, manifest, signature, attestation, layer_cache };
std::string to_string(PruneKind k);

struct PruneItem {
  PruneKind kind = PruneKind::dangling_image;
  std::string what;    // the name or ID removed; "REPO:TAG" or "REPO@sha256:…" in a registry
  std::string reason;  // why it goes (or, for a kept item, why it stays)
  std::string error;   // removing it failed: the engine's or registry's message
};

struct PruneReport {
  bool dry_run = false;
  std::vector<PruneItem> removed;  // what went (dry run: what would go), in order
  std::vector<PruneItem> kept;     // candidates that stay, with the reason (e.g. a release names the digest)
  bool ok() const;                 // no removal failed
  void append(PruneReport other);
};

// One line per item: "remove stage-image imgtool-stage/…:build (no tagged cell image needs stage abc…)",
// "would remove …" in a dry run, "keep …" for kept items, "FAILED …: error" for failures.
std::string render_text(const PruneReport& r);
nlohmann::json to_json(const PruneReport& r);

// The engine rule above over the engine's listings of cell images (label
// io.imgtool.tag), stage images (label io.imgtool.stage-of) and untagged first
// stages (label io.imgtool.build-stage).
std::vector<PruneItem> plan_engine_prune(const std::vector<engine::ImageInfo>& cell_images,
                                         const std::vector<engine::ImageInfo>& stage_images,
                                         const std::vector<engine::ImageInfo>& build_stages = {});

// Lists, plans and (unless dry_run) removes through `docker`.
PruneReport prune_engine(engine::Engine& docker, bool dry_run);

}  // namespace imgtool::builder
