// Filesystem helpers whose contract is "nothing half-written": a file or a
// folder appears under its final name complete, or not at all.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "core/signal_cleanup.h"

namespace imgtool {

namespace fs = std::filesystem;

// Writes `content` to a fresh `<path>.tmp-XXXXXX` (mkstemp: created O_EXCL,
// never through an existing file or symlink), sets `mode` on it (e.g. 0600 for
// private keys), fsyncs it, renames it onto `path` and fsyncs the folder.
void write_file_atomic(const fs::path& path, std::string_view content, unsigned mode = 0644);

// The same for a file written in pieces (a streamed blob): `<path>.tmp-XXXXXX` made by mkstemp,
// written by write(), then commit() sets `mode`, fsyncs, renames it onto `path` (or onto `to`, on
// the same filesystem: a name known only at the end, such as a digest) and fsyncs the folder.
// Destroyed before commit(), the temporary file is removed.
class AtomicFile {
 public:
  explicit AtomicFile(const fs::path& path, unsigned mode = 0644);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(std::string_view bytes);
  void commit(const fs::path& to = {});
  const fs::path& temp_path() const { return tmp_; }

 private:
  fs::path path_, tmp_;
  unsigned mode_;
  int fd_ = -1;
  bool committed_ = false;
};

// fsync of a folder (after a rename into it); errors are ignored.
void fsync_dir(const fs::path& dir);

std::string read_file(const fs::path& path);

// A temporary folder beside `final_dir`; commit() swaps it into place
// (replacing an older folder of that name). Destroyed without commit(), it is
// removed, so an error leaves nothing half-written behind. `final_dir` is a path the
// user named: one with no name, or at a place that takes no new folder (no permission,
// read-only, /proc, a file in the way), is InputError "'PATH': expected …" (callers
// prefix their flag); other failures (a full disk) are Error.
class StagingDir {
 public:
  explicit StagingDir(fs::path final_dir);
  ~StagingDir();
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;
  const fs::path& path() const { return tmp_; }
  void commit();

 private:
  fs::path final_, tmp_;
  bool committed_ = false;
  CleanupSlot on_signal_;  // a SIGTERM/SIGINT before commit() removes it too (signal_cleanup.h)
};

// A private temporary folder: mkdtemp (an unpredictable name, mode 0700, never an existing
// file or link) as `<parent>/<prefix>XXXXXX`, parent = the system temp folder by default;
// removed with everything in it on destruction, or by a SIGTERM/SIGINT/SIGHUP under
// end_children_on_signal (core/signal_cleanup.h). No other user can pre-create, link or read
// what is written in it: child output, a build's image-ID file, a credential helper's answer.
class PrivateTempDir {
 public:
  explicit PrivateTempDir(const std::string& prefix = "imgtool-", const fs::path& parent = {});
  ~PrivateTempDir();
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const char* name) const { return path_ / name; }

 private:
  fs::path path_;
  CleanupSlot on_signal_;
};

}  // namespace imgtool
