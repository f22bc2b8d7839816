#include "builder/state_store.h"

#include <sqlite3.h>

#include <chrono>

#include "core/error.h"
#include "core/paths.h"

namespace imgtool::builder {
namespace {

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS builds(
  tag TEXT PRIMARY KEY, inputs_hash TEXT NOT NULL, image TEXT NOT NULL, image_id TEXT NOT NULL,
  seconds REAL NOT NULL, finished_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS steps(
  step TEXT NOT NULL, tag TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, detail TEXT NOT NULL,
  finished_at INTEGER NOT NULL, PRIMARY KEY(step, tag, key));
)";

// A prepared statement that finalises itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK)
      throw Error(std::string("state store: cannot prepare statement: ") + sqlite3_errmsg(db));
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.c_str(), -1, SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind(int i, double v) {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  Stmt& bind(int i, long long v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  bool step() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw Error(std::string("state store: ") + sqlite3_errmsg(db_), rc == SQLITE_BUSY);
  }
  std::string text(int i) {
    auto p = sqlite3_column_text(s_, i);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  double real(int i) { return sqlite3_column_double(s_, i); }
  long long integer(int i) { return sqlite3_column_int64(s_, i); }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
};

long long now_unix() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

fs::path default_state_dir() { return fs::path(cache_dir()); }

StateStore::StateStore(const fs::path& dir) : path_(dir / "state.db") {
  fs::create_directories(dir);
  if (sqlite3_open(path_.c_str(), &db_) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw Error("state store " + path_.string() + ": cannot open: " + msg + "; fix: check the folder is writable");
  }
  sqlite3_busy_timeout(db_, 30000);
  exec(kSchema);
}

StateStore::~StateStore() { sqlite3_close(db_); }

void StateStore::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw Error("state store " + path_.string() + ": " + msg);
  }
}

std::optional<BuildRecord> StateStore::last_build(const std::string& tag) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT inputs_hash, image, image_id, seconds, finished_at FROM builds WHERE tag=?");
  s.bind(1, tag);
  if (!s.step()) return std::nullopt;
  return BuildRecord{tag, s.text(0), s.text(1), s.text(2), s.real(3), s.integer(4)};
}

void StateStore::record_build(const BuildRecord& r) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "INSERT OR REPLACE INTO builds VALUES(?,?,?,?,?,?)");
  s.bind(1, r.tag).bind(2, r.inputs_hash).bind(3, r.image).bind(4, r.image_id).bind(5, r.seconds);
  s.bind(6, r.finished_at ? r.finished_at : now_unix());
  s.step();
}

void StateStore::forget_build(const std::string& tag) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "DELETE FROM builds WHERE tag=?");
  s.bind(1, tag);
  s.step();
}

std::optional<StepRecord> StateStore::step(const std::string& step, const std::string& tag, const std::string& key) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT value, detail, finished_at FROM steps WHERE step=? AND tag=? AND key=?");
  s.bind(1, step).bind(2, tag).bind(3, key);
  if (!s.step()) return std::nullopt;
  return StepRecord{step, tag, key, s.text(0), s.text(1), s.integer(2)};
}

void StateStore::record_step(const StepRecord& r) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "INSERT OR REPLACE INTO steps VALUES(?,?,?,?,?,?)");
  s.bind(1, r.step).bind(2, r.tag).bind(3, r.key).bind(4, r.value).bind(5, r.detail);
  s.bind(6, r.finished_at ? r.finished_at : now_unix());
  s.step();
}

}  // namespace imgtool::builder
