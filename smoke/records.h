// Throughput records: one row per (smoke run, metric) in an embedded SQLite
// file, by default <cache_dir()>/records.db ($IMGTOOL_RECORDS overrides).
//
// Data model (table `records`):
//   time          unix seconds (from the injected clock)
//   image_digest  "repo@sha256:…" or the image ID
//   tag           io.imgtool.tag (the series key across nightly rebuilds)
//   gpu           device name as the probe reports it ("NVIDIA H100 80GB HBM3")
//   driver        driver branch ("550.54.15"), else the CUDA version it supports
//   metric        "bandwidth_copy", "gemm_fp16", … (probe.py `metrics`)
//   value, unit   42.0, "TFLOP/s"
// A series is (tag, gpu, driver, metric) ordered by time.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/sqlite.h"

namespace imgtool::smoke {

struct Record {
  int64_t time = 0;
  std::string image_digest, tag, gpu, driver, metric;
  double value = 0;
  std::string unit;
};

// Filters for series(); empty strings match everything.
struct RecordQuery {
  std::string tag, gpu, driver, metric;
  int64_t before = INT64_MAX;  // only rows with time < before
  int limit = 0;               // 0 = all; else the newest `limit` rows (still returned oldest first)
};

// Seconds since the epoch; tests inject a fixed or stepping clock.
using Clock = std::function<int64_t()>;
Clock system_clock();

class RecordStore {
 public:
  // Opens (creating file, folders and schema if needed). Throws Error with the path on failure.
  explicit RecordStore(const std::string& path);
  RecordStore(const RecordStore&) = delete;
  RecordStore& operator=(const RecordStore&) = delete;

  // $IMGTOOL_RECORDS, else cache_dir() + "/records.db".
  static std::string default_path();

  void add(const Record& r);
  // Matching rows ordered by (time, insertion).
  std::vector<Record> query(const RecordQuery& q) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  sqlite::Database db_;
};

}  // namespace imgtool::smoke
