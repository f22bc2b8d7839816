#include "smoke/records.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "core/paths.h"

namespace imgtool::smoke {
namespace {

const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY,
  time INTEGER NOT NULL,
  image_digest TEXT NOT NULL,
  tag TEXT NOT NULL,
  gpu TEXT NOT NULL,
  driver TEXT NOT NULL,
  metric TEXT NOT NULL,
  value REAL NOT NULL,
  unit TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_series ON records(tag, gpu, driver, metric, time);
)";

}  // namespace

Clock system_clock() {
  return [] {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
}

std::string RecordStore::default_path() {
  const char* v = std::getenv("IMGTOOL_RECORDS");
  return v && *v ? v : cache_dir() + "/records.db";
}

// Parallel smoke runs share one file: a 10 s busy timeout.
RecordStore::RecordStore(const std::string& path) : path_(path), db_(path, kSchema, 10000, "records " + path) {}

void RecordStore::add(const Record& r) {
  sqlite::Statement st(db_,
                       "INSERT INTO records(time, image_digest, tag, gpu, driver, metric, value, unit) "
                       "VALUES(?,?,?,?,?,?,?,?)");
  st.bind(1, r.time).bind(2, r.image_digest).bind(3, r.tag).bind(4, r.gpu).bind(5, r.driver).bind(6, r.metric);
  st.bind(7, r.value).bind(8, r.unit);
  st.step();
}

std::vector<Record> RecordStore::query(const RecordQuery& q) const {
  // Newest `limit` rows first, then reversed, so callers always see time order.
  sqlite::Statement st(db_,
                       "SELECT time, image_digest, tag, gpu, driver, metric, value, unit FROM records "
                       "WHERE (?1 = '' OR tag = ?1) AND (?2 = '' OR gpu = ?2) AND (?3 = '' OR driver = ?3) "
                       "AND (?4 = '' OR metric = ?4) AND time < ?5 ORDER BY time DESC, id DESC LIMIT ?6");
  st.bind(1, q.tag).bind(2, q.gpu).bind(3, q.driver).bind(4, q.metric).bind(5, q.before);
  st.bind(6, static_cast<int64_t>(q.limit > 0 ? q.limit : -1));
  std::vector<Record> out;
  while (st.step())
    out.push_back({st.integer(0), st.text(1), st.text(2), st.text(3), st.text(4), st.text(5), st.real(6), st.text(7)});
  return {out.rbegin(), out.rend()};
}

}  // namespace imgtool::smoke
