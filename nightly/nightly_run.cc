#include "nightly/nightly_run.h"

#include <algorithm>
#include <optional>

#include "builder/cell_source.h"
#include "builder/state_store.h"
#include "core/error.h"
#include "nightly/nightly_reproduce.h"
#include "nightly/report.h"
#include "nightly/report_changes.h"

namespace imgtool::nightly {

NightlyReport nightly(const NightlyRequest& req) {
  if (req.inputs.empty())
    throw InputError("nightly: expected a matrix file or a folder of generated cells, found none");
  if (!req.engine || !req.kb) throw Error("nightly: the request was handed no engine or no KB (NightlyRequest)");
  engine::Engine& docker = *req.engine;
  const matrix::KnowledgeBase& kb = *req.kb;
  RealStepsOptions so = req.steps;
  so.engine = &docker;
  so.kb = &kb;
  auto steps = make_real_steps(so);      // loads the key: a bad key fails before any build
  builder::StateStore store(req.state);  // one run per state folder: taken before generating into it
  auto src = builder::load_cells(req.inputs, req.state, kb, &docker, req.base_registry);
  auto cells = select_shard(builder::select_tags(src.cells, req.only), req.options.shard);
  if (req.log)
    for (const auto& line : src.pinned) req.log("nightly: " + line);
  if (req.log)
    req.log("nightly: shard " + req.options.shard.text() + ": " + std::to_string(cells.size()) + " of " +
            std::to_string(src.cells.size()) + " cell(s) from " + builder::describe_dirs(src));
  NightlyReport report = run_nightly(cells, req.options, docker, store, steps.get());
  if (req.reproduce > 0) {
    std::string day = report.started.substr(0, 10);  // YYYY-MM-DD…
    day.erase(std::remove(day.begin(), day.end(), '-'), day.end());
    reproduce_published(report, cells,
                        {.count = req.reproduce,
                         .today = req.options.today.empty() ? day : req.options.today,
                         .work_parent = req.state,
                         .transport = so.transport,
                         .rules = req.options.build.normalize_rules,
                         .on_event = req.options.build.on_event},
                        docker);
  }
  if (req.release) stage_promotions(report, req.options.target, *req.release);
  compare_with_last_run(report, req.state);
  write_report(req.report, report);
  return report;
}

}  // namespace imgtool::nightly
