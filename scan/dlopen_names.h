// The library names a binary holds as C strings -- what Paddle's phi/backends/dynload passes to
// dlopen ("libnvrtc.so", "libcublas.so.12", "libnccl.so;libnccl.so.2"): the names it will ask the
// loader for, read off the bytes instead of guessed from the CUDA major. A streaming scanner
// (bytes in any chunking give the same answer) with fixed memory: a printable run longer than
// kMaxRun is no name, and at most kMaxNames distinct names are kept (`truncated` says so).
//   DlopenNames s; s.feed(p, n)…; s.names()  -> {"libcublas.so.12", "libnvrtc.so", …} (sorted)
// A name is lib<word>.so[.<digits>]… , alone in its string or one item of a ';'-separated list
// (the form Paddle uses for NCCL's two tries); the string starts after a NUL (or the data's start)
// and ends at one, as string literals sit in .rodata.
// A short literal may not be stored at all: GCC builds a std::string of up to 15 characters from
// immediates (PyPI's paddlepaddle-gpu 2.6.2 libphi.so holds no "libcublas.so" string, but
// `movabs $"libcubla", %rdx` then ".so"/"s.so" stores). Such a name leaves its first 8 bytes as
// an x86-64 movabs immediate (REX.W B8+r imm64); heads() lists those that start with "lib": a name
// with that head may be built in code, its suffix unread.
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
  const std::set<std::string>& heads() const { return heads_; }  // "libcubla": movabs immediates
  // Names inside longer printable text too (a literal pool without NULs: "…el.slibnvToolsExt.solibc…"
  // in 2.6.2's libphi.so): a superset, for "does the binary hold this name at all".
  const std::set<std::string>& embedded() const { return embedded_; }
  bool truncated() const { return truncated_; }

 private:
  void keep(std::set<std::string>& set, const std::string& name);
  void end_run();
  void code_byte(unsigned char c);
  void text_byte(char c);
  void scan_text();
  std::string run_, text_;
  bool overlong_ = false, truncated_ = false;
  std::set<std::string> names_, heads_, embedded_;
  unsigned char window_[10] = {};  // the last 10 bytes: REX.W, B8+r, imm64
  size_t seen_ = 0;
};

// "libnvrtc.so" / "libcublas.so.12": a library file name as dlopen takes it (no folder).
bool is_library_name(const std::string& s);

}  // namespace imgtool::scan
