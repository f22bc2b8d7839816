#include "builder/state_store.h"

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

long long now_unix() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

fs::path default_state_dir() { return fs::path(cache_dir()); }

// The state folder is private (0700, ours, not group/world-writable; else
// InputError) before the lock file or the database is created in it.
static const fs::path& private_dir(const fs::path& dir) {
  ensure_private_dir(dir.string());
  return dir;
}

StateStore::StateStore(const fs::path& dir)
    : lock_(private_dir(dir)),
      path_(dir / "state.db"),
      db_(path_.string(), kSchema, 30000, "state store " + path_.string()) {}

std::optional<BuildRecord> StateStore::last_build(const std::string& tag) {
  std::lock_guard lock(mu_);
  sqlite::Statement s(db_, "SELECT inputs_hash, image, image_id, seconds, finished_at FROM builds WHERE tag=?");
  s.bind(1, tag);
  if (!s.step()) return std::nullopt;
  return BuildRecord{tag, s.text(0), s.text(1), s.text(2), s.real(3), s.integer(4)};
}

void StateStore::record_build(const BuildRecord& r) {
  std::lock_guard lock(mu_);
  sqlite::Statement s(db_, "INSERT OR REPLACE INTO builds VALUES(?,?,?,?,?,?)");
  s.bind(1, r.tag).bind(2, r.inputs_hash).bind(3, r.image).bind(4, r.image_id).bind(5, r.seconds);
  s.bind(6, r.finished_at ? r.finished_at : now_unix());
  s.step();
}

void StateStore::forget_build(const std::string& tag) {
  std::lock_guard lock(mu_);
  sqlite::Statement s(db_, "DELETE FROM builds WHERE tag=?");
  s.bind(1, tag);
  s.step();
}

std::optional<StepRecord> StateStore::step(const std::string& step, const std::string& tag, const std::string& key) {
  std::lock_guard lock(mu_);
  sqlite::Statement s(db_, "SELECT value, detail, finished_at FROM steps WHERE step=? AND tag=? AND key=?");
  s.bind(1, step).bind(2, tag).bind(3, key);
  if (!s.step()) return std::nullopt;
  return StepRecord{step, tag, key, s.text(0), s.text(1), s.integer(2)};
}

void StateStore::record_step(const StepRecord& r) {
  std::lock_guard lock(mu_);
  sqlite::Statement s(db_, "INSERT OR REPLACE INTO steps VALUES(?,?,?,?,?,?)");
  s.bind(1, r.step).bind(2, r.tag).bind(3, r.key).bind(4, r.value).bind(5, r.detail);
  s.bind(6, r.finished_at ? r.finished_at : now_unix());
  s.step();
}

}  // namespace imgtool::builder
