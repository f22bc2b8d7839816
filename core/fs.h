// Filesystem helpers whose contract is "nothing half-written": a file or a
// folder appears under its final name complete, or not at all.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

namespace imgtool {

namespace fs = std::filesystem;

// Writes `content` to a fresh `<path>.tmp-XXXXXX` (mkstemp: created O_EXCL,
// never through an existing file or symlink), sets `mode` on it (e.g. 0600 for
// private keys), fsyncs it, renames it onto `path` and fsyncs the folder.
void write_file_atomic(const fs::path& path, std::string_view content, unsigned mode = 0644);

std::string read_file(const fs::path& path);

// A temporary folder beside `final_dir`; commit() swaps it into place
// (replacing an older folder of that name). Destroyed without commit(), it is
// removed, so an error leaves nothing half-written behind.
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
};

}  // namespace imgtool
