#include "verify/records.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "core/paths.h"

namespace imgtool::verify {
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

// A prepared statement that finalizes itself.
struct Stmt {
  sqlite3_stmt* s = nullptr;
  Stmt(sqlite3* db, const char* sql, const std::string& where) {
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK)
      throw Error("records " + where + ": " + sqlite3_errmsg(db));
  }
  ~Stmt() { sqlite3_finalize(s); }
  void text(int i, const std::string& v) { sqlite3_bind_text(s, i, v.c_str(), -1, SQLITE_TRANSIENT); }
  std::string col_text(int i) const {
    auto p = sqlite3_column_text(s, i);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
};

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

RecordStore::RecordStore(const std::string& path) : path_(path) {
  auto parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw Error("records: cannot open " + path + ": " + msg);
  }
  sqlite3_busy_timeout(db_, 10000);  // parallel smoke runs share one file
  char* err = nullptr;
  if (sqlite3_exec(db_, kSchema, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "?";
    sqlite3_free(err);
    sqlite3_close(db_);
    throw Error("records: cannot create the schema in " + path + ": " + msg);
  }
}

RecordStore::~RecordStore() { sqlite3_close(db_); }

void RecordStore::add(const Record& r) {
  Stmt st(db_,
          "INSERT INTO records(time, image_digest, tag, gpu, driver, metric, value, unit) "
          "VALUES(?,?,?,?,?,?,?,?)",
          "insert into " + path_);
  sqlite3_bind_int64(st.s, 1, r.time);
  st.text(2, r.image_digest);
  st.text(3, r.tag);
  st.text(4, r.gpu);
  st.text(5, r.driver);
  st.text(6, r.metric);
  sqlite3_bind_double(st.s, 7, r.value);
  st.text(8, r.unit);
  if (sqlite3_step(st.s) != SQLITE_DONE) throw Error("records: insert into " + path_ + ": " + sqlite3_errmsg(db_));
}

std::vector<Record> RecordStore::query(const RecordQuery& q) const {
  // Newest `limit` rows first, then reversed, so callers always see time order.
  Stmt st(db_,
          "SELECT time, image_digest, tag, gpu, driver, metric, value, unit FROM records "
          "WHERE (?1 = '' OR tag = ?1) AND (?2 = '' OR gpu = ?2) AND (?3 = '' OR driver = ?3) "
          "AND (?4 = '' OR metric = ?4) AND time < ?5 ORDER BY time DESC, id DESC LIMIT ?6",
          "query " + path_);
  st.text(1, q.tag);
  st.text(2, q.gpu);
  st.text(3, q.driver);
  st.text(4, q.metric);
  sqlite3_bind_int64(st.s, 5, q.before);
  sqlite3_bind_int64(st.s, 6, q.limit > 0 ? q.limit : -1);
  std::vector<Record> out;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW)
    out.push_back({sqlite3_column_int64(st.s, 0), st.col_text(1), st.col_text(2), st.col_text(3), st.col_text(4),
                   st.col_text(5), sqlite3_column_double(st.s, 6), st.col_text(7)});
  if (rc != SQLITE_DONE) throw Error("records: query " + path_ + ": " + sqlite3_errmsg(db_));
  return {out.rbegin(), out.rend()};
}

}  // namespace imgtool::verify
