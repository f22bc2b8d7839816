// One run per state folder at a time: an exclusive flock(2) on <state>/lock,
// held for the life of the object (the kernel drops it when the process dies,
// so a killed run never leaves a stale lock). A second run on the same folder
// is refused at once with a message naming the folder and the holder's pid.
#pragma once
#include <filesystem>

namespace imgtool::builder {

class StateLock {
 public:
  // Creates `dir` (0700) if needed and takes the lock; imgtool::Error when
  // another run holds it or the lock file cannot be opened.
  explicit StateLock(const std::filesystem::path& dir);
  ~StateLock();
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace imgtool::builder
