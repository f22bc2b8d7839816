// The builder's memory between runs: one SQLite file (<state>/state.db,
// default <cache_dir()>/state.db). It records, per tag, the inputs hash and
// image id of the last good build, and the outcome of each later step of the
// nightly (smoke, publish), so a run with nothing changed does nothing.
//
// Contract: one StateStore may be used from several threads (calls are
// serialised); several processes may share the file (SQLite locking, a busy
// timeout of 30 s).
#pragma once
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

struct sqlite3;

namespace imgtool::builder {

namespace fs = std::filesystem;

struct BuildRecord {
  std::string tag;
  std::string inputs_hash;
  std::string image;     // local name:tag
  std::string image_id;  // "sha256:…"
  double seconds = 0;
  long long finished_at = 0;  // unix time
};

// A step of the nightly after the build, keyed by (step, tag, key): e.g.
// ("smoke", tag, image_id) or ("publish", tag, registry ref). `value` is what
// the step produced (a verdict, a digest) and `detail` its JSON, if any.
struct StepRecord {
  std::string step, tag, key, value, detail;
  long long finished_at = 0;
};

class StateStore {
 public:
  // Opens (creating) `dir`/state.db. Throws imgtool::Error when it cannot.
  explicit StateStore(const fs::path& dir);
  ~StateStore();
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  std::optional<BuildRecord> last_build(const std::string& tag);
  void record_build(const BuildRecord& r);
  void forget_build(const std::string& tag);

  std::optional<StepRecord> step(const std::string& step, const std::string& tag, const std::string& key);
  void record_step(const StepRecord& r);

  const fs::path& path() const { return path_; }

 private:
  void exec(const std::string& sql);
  fs::path path_;
  sqlite3* db_ = nullptr;
  std::mutex mu_;
};

// Where state lives without `--state DIR`: cache_dir() (state.db, logs/, generated/).
fs::path default_state_dir();

}  // namespace imgtool::builder
