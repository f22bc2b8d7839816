// The dynamic section of an ELF shared library -- DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH --
// read as its bytes stream by (one pass, in any chunking, bounded memory), so the loader model
// (scan/loader.h) can follow what a library needs and where it looks, as ld.so(8) does:
//   ElfDynamicScanner s; s.feed(p, n)…; if (s.done()) stop early; ElfDynamic d = s.result();
// Only 64-bit little-endian ELF (x86_64, aarch64) is read; anything else is `elf == false`.
// How, in one pass: the ELF header and program headers lie at the start; they give PT_DYNAMIC's
// offset and the PT_LOAD map. The dynamic section's names are offsets into .dynstr, which
// linkers place BEFORE .dynamic, so the scan keeps, until .dynamic is read, the strings that
// could be such a name (a NUL then "lib", "ld-", "/" or "$": library names, RPATH/RUNPATH
// entries) by file offset, in the first 32 MiB and the 32 MiB before .dynamic (in its segment);
// once .dynamic gives DT_STRTAB, only those inside
// .dynstr are kept (also when .dynstr comes after .dynamic, as in NVIDIA's libraries), and the
// scan is done() when it has passed both. A name whose string was not kept (a cap, or an odd
// layout) is counted in `unread`: the caller says "unknown", never "needs nothing".
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace imgtool::scan {

struct ElfDynamic {
  bool elf = false;                         // a 64-bit LE ELF whose dynamic section was read
  std::string soname;                       // DT_SONAME ("" = none)
  std::vector<std::string> needed;          // DT_NEEDED, in order
  std::vector<std::string> rpath, runpath;  // DT_RPATH / DT_RUNPATH entries, split on ':'
  size_t unread = 0;                        // names the dynamic section gives whose string was not kept
};

class ElfDynamicScanner {
 public:
  static constexpr size_t kMaxHeaders = 64 * 1024;  // ELF header + program headers
  static constexpr size_t kMaxDynamic = 64 * 1024;  // the dynamic section
  static constexpr size_t kMaxString = 4096;        // one kept string (PATH_MAX)
  static constexpr size_t kMaxStrings = 8192;       // strings kept per window before .dynamic is read
  void feed(const char* p, size_t n);
  // Nothing later in the file can change the result (not an ELF, or .dynamic and .dynstr passed).
  bool done() const { return dead_ || finished_; }
  ElfDynamic result() const;

 private:
  struct Load {
    uint64_t vaddr, offset, filesz;
  };
  void feed_headers(const char* p, size_t n);
  void parse_headers();
  void feed_dynamic(const char* p, size_t n, uint64_t at);
  void parse_dynamic();
  void feed_strings(const char* p, size_t n, uint64_t at);
  void end_string();
  bool wanted(uint64_t offset) const;
  uint64_t pos_ = 0;  // bytes seen
  bool dead_ = false, finished_ = false, have_headers_ = false, have_dynamic_ = false;
  std::string headers_, dynamic_;
  uint64_t dyn_off_ = 0, dyn_size_ = 0, near_off_ = 0, near_end_ = 0;
  std::vector<Load> loads_;
  // Strings: the candidate being read (its offset, bytes), the last bytes before it.
  bool in_string_ = false, overlong_ = false;
  uint64_t string_at_ = 0;
  std::string string_;
  char prev_ = 1;  // the byte before the current one (a file "starts" after no NUL)
  std::map<uint64_t, std::string> strings_;
  bool strings_capped_ = false;
  size_t kept_start_ = 0, kept_near_ = 0;  // strings kept in each window before .dynamic
  // From .dynamic: .dynstr's file range, the entries.
  uint64_t str_off_ = 0, str_end_ = 0;
  std::vector<std::pair<int64_t, uint64_t>> entries_;  // (d_tag, d_val) of the name entries
};

}  // namespace imgtool::scan
