// `imgtool history`: throughput series of one tag, grouped by (GPU, driver,
// metric), as a text table or JSON. Reads the records store; prints nothing.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "smoke/records.h"

namespace imgtool::smoke {

struct HistoryOptions {
  std::string tag;     // required
  std::string gpu;     // empty = every GPU
  std::string metric;  // empty = every metric
  int last = 0;        // 0 = all points; else the newest `last` per series
};

// {"tag": T, "records": path, "series": [{"gpu","driver","metric","unit",
//   "points": [{"time": unix, "time_utc": "…Z", "value", "image_digest"}]}]}
nlohmann::json history_json(const RecordStore& store, const HistoryOptions& opt);

// One block per series: a header line, then "time  value unit  digest" rows,
// with the median of the shown points. "no records" text when empty.
std::string history_text(const nlohmann::json& history);

}  // namespace imgtool::smoke
