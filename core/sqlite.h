// SQLite, once: a database handle that opens (creating folders and schema) with
// a busy timeout, and a prepared statement that binds, steps and finalises
// itself. Errors are imgtool::Error prefixed with `where` (what and which file,
// e.g. "records /x/records.db"); a busy
// database is retryable. Used by builder/state_store and verify/records.
#pragma once
#include <cstdint>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace imgtool::sqlite {

class Database {
 public:
  // Opens `path` (creating its folder), sets the busy timeout and runs `schema`.
  Database(const std::string& path, const std::string& schema, int busy_timeout_ms, std::string where);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  sqlite3* get() const { return db_; }
  const std::string& where() const { return where_; }

 private:
  sqlite3* db_ = nullptr;
  std::string where_;
};

class Statement {
 public:
  Statement(const Database& db, const char* sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& bind(int i, const std::string& v);
  Statement& bind(int i, double v);
  Statement& bind(int i, int64_t v);
  Statement& bind(int i, long long v) { return bind(i, static_cast<int64_t>(v)); }
  Statement& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  // true: a row is ready; false: done. Error otherwise.
  bool step();
  std::string text(int col) const;
  double real(int col) const;
  int64_t integer(int col) const;

 private:
  const Database& db_;
  sqlite3_stmt* s_ = nullptr;
};

}  // namespace imgtool::sqlite
