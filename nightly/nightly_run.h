// `imgtool nightly`, one call: the matrix inputs -> cells (generated into the state folder) -> this
// shard's share -> run_nightly (nightly.h: build, smoke, gate, publish) -> the promotion commands of
// a staged run -> the changes since the last run -> the report folder. The CLI fills the request and
// renders the summary; nothing else is assembled there.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "builder/base_pin.h"
#include "engine/engine.h"
#include "nightly/nightly.h"
#include "nightly/nightly_steps_real.h"

namespace imgtool::nightly {

struct NightlyRequest {
  std::vector<std::filesystem::path> inputs;    // matrix files or folders of generated cells
  std::vector<std::string> only;                // only these tags (empty: all)
  std::filesystem::path state;                  // state folder (one run at a time holds it)
  std::filesystem::path report;                 // report folder written at the end
  NightlyOptions options;                       // build, target, shard, gpus, KB section
  RealStepsOptions steps;                       // smoke, gate and publish (key, registry, smoke settings)
  std::optional<image::Reference> release;      // --stage-repository: the release registry promotions go to
  engine::Engine* engine = nullptr;             // the run's one engine (the CLI's); required
  const matrix::KnowledgeBase* kb = nullptr;    // the run's one KB (plan, gate, floors); required
  std::function<void(const std::string&)> log;  // progress lines ("nightly: shard 1/2: …")
  builder::RegistryDigest base_registry;        // asked for bases the engine lacks (the CLI's: registry_digest)
  int reproduce = 0;  // --reproduce N: N published cells rebuilt with --no-cache and compared (nightly_reproduce.h)
};

// Never throws for a failing cell (the report says so); InputError for a bad request.
NightlyReport nightly(const NightlyRequest& req);

}  // namespace imgtool::nightly
