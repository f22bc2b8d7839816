// The builder's memory between runs: one SQLite file (<state>/state.db,
// default <cache_dir()>/state.db). It records, per tag, the inputs hash and
// image id of the last good build, and the outcome of each later step of the
// nightly (smoke, publish), so a run with nothing changed does nothing.
//
// Contract: one StateStore may be used from several threads (calls are
// serialised); one run per state folder: the store holds the folder's
// StateLock (state_lock.h), so a second run on the same folder is refused.
#pragma once
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include "builder/state_lock.h"
#include "core/sqlite.h"

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
  // Locks `dir` (StateLock), then opens (creating) `dir`/state.db. Throws
  // imgtool::Error when another run holds the folder or the file cannot be opened.
  explicit StateStore(const fs::path& dir);
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  std::optional<BuildRecord> last_build(const std::string& tag);
  void record_build(const BuildRecord& r);
  void forget_build(const std::string& tag);

  std::optional<StepRecord> step(const std::string& step, const std::string& tag, const std::string& key);
  void record_step(const StepRecord& r);

  const fs::path& path() const { return path_; }

 private:
  StateLock lock_;
  fs::path path_;
  sqlite::Database db_;
  std::mutex mu_;
};

// Where state lives without `--state DIR`: cache_dir() (state.db, logs/, generated/).
fs::path default_state_dir();

}  // namespace imgtool::builder
