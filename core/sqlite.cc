#include "core/sqlite.h"

#include <sqlite3.h>

#include <filesystem>

#include "core/error.h"

namespace imgtool::sqlite {

Database::Database(const std::string& path, const std::string& schema, int busy_timeout_ms, std::string where)
    : where_(std::move(where)) {
  auto parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw Error(where_ + ": cannot open: " + msg + "; fix: check the folder is writable");
  }
  sqlite3_busy_timeout(db_, busy_timeout_ms);
  char* err = nullptr;
  if (sqlite3_exec(db_, schema.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    sqlite3_close(db_);
    throw Error(where_ + ": cannot create the schema: " + msg);
  }
}

Database::~Database() { sqlite3_close(db_); }

Statement::Statement(const Database& db, const char* sql) : db_(db) {
  if (sqlite3_prepare_v2(db.get(), sql, -1, &s_, nullptr) != SQLITE_OK)
    throw Error(db.where() + ": cannot prepare statement: " + sqlite3_errmsg(db.get()));
}

Statement::~Statement() { sqlite3_finalize(s_); }

Statement& Statement::bind(int i, const std::string& v) {
  sqlite3_bind_text(s_, i, v.c_str(), -1, SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind(int i, double v) {
  sqlite3_bind_double(s_, i, v);
  return *this;
}

Statement& Statement::bind(int i, int64_t v) {
  sqlite3_bind_int64(s_, i, v);
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw Error(db_.where() + ": " + sqlite3_errmsg(db_.get()), rc == SQLITE_BUSY);
}

std::string Statement::text(int col) const {
  auto p = sqlite3_column_text(s_, col);
  return p ? reinterpret_cast<const char*>(p) : "";
}

double Statement::real(int col) const { return sqlite3_column_double(s_, col); }

int64_t Statement::integer(int col) const { return sqlite3_column_int64(s_, col); }

}  // namespace imgtool::sqlite
