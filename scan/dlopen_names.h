// The library names a binary holds as C strings -- what Paddle's phi/backends/dynload passes to
// dlopen ("libnvrtc.so", "libcublas.so.12", "libnccl.so;libnccl.so.2"): the names it will ask the
// loader for, read off the bytes instead of guessed from the CUDA major. A streaming scanner
// (bytes in any chunking give the same answer) with fixed memory: a printable run longer than
// kMaxRun is no name, and at most kMaxNames distinct names are kept (`truncated` says so).
//   DlopenNames s; s.feed(p, n)…; s.names()  -> {"libcublas.so.12", "libnvrtc.so", …} (sorted)
// A name is lib<word>.so[.<digits>]… , alone in its string or one item of a ';'-separated list
// (the form Paddle uses for NCCL's two tries); the string starts after a NUL (or the data's start)
// and ends at one, as string literals sit in .rodata.
#pragma once
#include <cstddef>
#include <set>
#include <string>

namespace imgtool::scan {

class DlopenNames {
 public:
  static constexpr size_t kMaxRun = 256;
  static constexpr size_t kMaxNames = 512;
  void feed(const char* p, size_t n);
  // After the last feed: a run not ended by its NUL is no C string, and is dropped.
  void finish();
  const std::set<std::string>& names() const { return names_; }
  bool truncated() const { return truncated_; }

 private:
  void end_run();
  std::string run_;
  bool overlong_ = false, truncated_ = false;
  std::set<std::string> names_;
};

// "libnvrtc.so" / "libcublas.so.12": a library file name as dlopen takes it (no folder).
bool is_library_name(const std::string& s);

}  // namespace imgtool::scan
