// Folders a fatal signal must not leave behind. A PrivateTempDir or an uncommitted StagingDir
// (core/fs.h) holds a CleanupSlot for as long as it exists; the handler end_children_on_signal
// installs (core/process.h) calls remove_registered_dirs() after ending the children and before
// the signal's own default action, so a SIGTERM'd or Ctrl-C'd imgtool leaves no imgtool-run-…,
// imgtool-build-… or .out.tmp-… folder (child output, a build's image-ID file) behind.
//
// The handler's side is async-signal-safe: fixed slots (no allocation, no locks), each holding an
// absolute path, and a removal written with openat/getdents64/unlinkat on stack buffers — never
// std::filesystem. Best effort by contract: with every slot taken, or a path longer than a slot,
// the folder is not registered (it is still removed on the ordinary path, by its destructor).
#pragma once
#include <filesystem>

namespace imgtool {

class CleanupSlot {
 public:
  CleanupSlot() = default;
  ~CleanupSlot() { release(); }
  // Registers `dir` (made absolute), replacing what this slot held.
  void hold(const std::filesystem::path& dir);
  CleanupSlot(const CleanupSlot&) = delete;
  CleanupSlot& operator=(const CleanupSlot&) = delete;
  // Unregisters (once the folder is gone or has become something to keep, e.g. committed).
  void release();

 private:
  int slot_ = -1;
};

// Removes every registered folder with everything in it; async-signal-safe, never throws.
void remove_registered_dirs() noexcept;

}  // namespace imgtool
