// Human-readable rendering of a SmokeResult (the `imgtool smoke` report).
// One line per probe section: "name  status  reason", then the throughput
// judgements and the verdict with its reasons and warnings.
#pragma once
#include <string>
#include <vector>

#include "smoke/records_judge.h"
#include "smoke/smoke_runner.h"

namespace imgtool::smoke {

std::string smoke_text(const SmokeResult& res, const std::vector<Judgement>& throughput);

// Adds failed throughput judgements to the result's reasons (and flips the verdict).
void apply_throughput(SmokeResult& res, const std::vector<Judgement>& throughput);

}  // namespace imgtool::smoke
