// nightly --reproduce N: tonight's sample of published cells rebuilt from the matrix with --no-cache,
// normalized and compared with what the registry holds under the cell's tag (reproduce/reproduce.h);
// each sampled cell's report row carries the outcome, and a cell whose image is not reproduced is
// not ok (the nightly exits 1).
//
// The sample: N of the cells published (or unchanged) tonight, in tag order, starting at the day's
// place (the day number modulo their count), so every cell's turn comes over the nights.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "builder/generated_cell.h"
#include "engine/engine.h"
#include "image/normalize.h"
#include "image/transport.h"
#include "nightly/nightly_model.h"

namespace imgtool::nightly {

struct ReproduceSample {
  int count = 0;                            // N
  std::string today;                        // YYYYMMDD: where the sample starts
  std::filesystem::path work_parent;        // the private work folder goes here (the state folder)
  image::TransportOptions transport;        // to read the published images (the run's registry session)
  std::vector<image::NormalizeRule> rules;  // the run's --normalize-rules; empty: image/normalize_rules.tsv
  std::function<void(const std::string&)> on_event;
};

// The indexes of `report.cells` sampled tonight.
std::vector<size_t> reproduce_sample(const NightlyReport& report, int count, const std::string& today);

void reproduce_published(NightlyReport& report, const std::vector<builder::GeneratedCell>& cells,
                         const ReproduceSample& s, engine::Engine& docker);

}  // namespace imgtool::nightly
