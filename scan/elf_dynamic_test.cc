// scan/elf_dynamic: DT_NEEDED / DT_SONAME / DT_RPATH / DT_RUNPATH of a streamed ELF, in any
// chunking, bounded, hostile layouts refused.
#include "scan/elf_dynamic.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "scan/testing/elf.h"

using namespace imgtool::scan;
using imgtool::scan::testing::Dyn;
using imgtool::scan::testing::make_elf;
using imgtool::scan::testing::put;

namespace {

ElfDynamic scan(const std::string& bytes, size_t chunk, bool* done_early = nullptr, size_t stop_at = 0) {
  ElfDynamicScanner s;
  for (size_t at = 0; at < bytes.size(); at += chunk) {
    if (done_early && stop_at && at >= stop_at && s.done()) *done_early = true;
    s.feed(bytes.data() + at, std::min(chunk, bytes.size() - at));
  }
  return s.result();
}

const std::vector<Dyn> kCusparse = {{1, "libnvJitLink.so.12"},
                                    {1, "libdl.so.2"},
                                    {1, "libc.so.6"},
                                    {14, "libcusparse.so.12"},
                                    {29, "$ORIGIN/../../nvjitlink/lib:$ORIGIN"}};

}  // namespace

TEST_CASE("elf dynamic: NEEDED, SONAME and RUNPATH of a library, whatever the chunking") {
  std::string text = std::string(3000, '\x90') + std::string("\0libdecoy.so.1\0/opt/decoy\0", 26) + std::string(999, 0);
  std::string elf = make_elf(kCusparse, text);
  for (size_t chunk : {1, 2, 7, 64, 4096, 1 << 20}) {
    ElfDynamic d = scan(elf, chunk);
    CHECK(d.elf);
    CHECK(d.needed == std::vector<std::string>{"libnvJitLink.so.12", "libdl.so.2", "libc.so.6"});
    CHECK(d.soname == "libcusparse.so.12");
    CHECK(d.runpath == std::vector<std::string>{"$ORIGIN/../../nvjitlink/lib", "$ORIGIN"});
    CHECK(d.rpath.empty());
    CHECK(d.unread == 0);
  }
}

TEST_CASE("elf dynamic: DT_RPATH is its own list; a name in the middle of a kept string (merged suffix)") {
  ElfDynamic d = scan(make_elf({{15, "/usr/local/cuda/lib64::$ORIGIN"}, {1, "libcudart.so.12"}}), 5);
  CHECK(d.rpath == std::vector<std::string>{"/usr/local/cuda/lib64", "$ORIGIN"});
  CHECK(d.runpath.empty());
  // NEEDED "libcudart.so.12" + 3 = "cudart.so.12": read from inside the kept string.
  std::string elf = make_elf({{1, "libcudart.so.12"}, {1, "", 1 + 3}});
  CHECK(scan(elf, 3).needed == std::vector<std::string>{"libcudart.so.12", "cudart.so.12"});
}

TEST_CASE("elf dynamic: what is not a 64-bit LE dynamic ELF, and hostile layouts") {
  CHECK_FALSE(scan("#!/bin/sh\necho hi\n", 1).elf);
  CHECK_FALSE(scan(std::string(100, '\0'), 7).elf);
  std::string elf32 = make_elf(kCusparse);
  elf32[4] = 1;  // ELFCLASS32
  CHECK_FALSE(scan(elf32, 64).elf);
  std::string be = make_elf(kCusparse);
  be[5] = 2;  // big-endian
  CHECK_FALSE(scan(be, 64).elf);
  // A static binary: an ELF that needs nothing.
  ElfDynamic st = scan(make_elf({}, std::string(64, 0), 0, false), 9);
  CHECK(st.elf);
  CHECK(st.needed.empty());
  // Truncated before the dynamic section: not read, not "needs nothing".
  std::string cut = make_elf(kCusparse);
  CHECK_FALSE(scan(cut.substr(0, cut.size() - 20), 64).elf);
  // Program headers beyond the cap, or overlapping the ELF header.
  std::string far = make_elf(kCusparse);
  put<uint64_t>(far, 0x20, 1 << 20);
  CHECK_FALSE(scan(far, 4096).elf);
  std::string overlap = make_elf(kCusparse);
  put<uint64_t>(overlap, 0x20, 8);
  CHECK_FALSE(scan(overlap, 4096).elf);
  // DT_STRTAB outside every PT_LOAD, and a name offset past DT_STRSZ: counted unread, never guessed.
  ElfDynamic off = scan(make_elf(kCusparse, std::string(64, 0), 1ull << 40), 64);
  CHECK(off.elf);
  CHECK(off.needed.empty());
  CHECK(off.unread == kCusparse.size());
  ElfDynamic past = scan(make_elf({{1, "libc.so.6"}, {1, "", 1ull << 62}}), 64);
  CHECK(past.needed == std::vector<std::string>{"libc.so.6"});
  CHECK(past.unread == 1);
}

TEST_CASE("elf dynamic: done once .dynstr and .dynamic are passed; memory stays bounded") {
  std::string elf = make_elf(kCusparse) + std::string(8 << 20, '\0');
  bool early = false;
  ElfDynamic d = scan(elf, 1 << 16, &early, elf.size() - (4 << 20));
  CHECK(early);
  CHECK(d.needed.size() == 3);
  // 100k candidate strings before .dynamic (a hostile text section): capped, the result still read.
  std::string junk;
  for (int i = 0; i < 100000; ++i) junk += '\0' + ("libx" + std::to_string(i) + ".so");
  junk += '\0';
  ElfDynamic j = scan(make_elf(kCusparse, junk), 4096);
  CHECK(j.elf);
  CHECK(j.soname == "libcusparse.so.12");  // .dynstr comes first: its strings were kept before the cap
}

TEST_CASE("elf dynamic: .dynstr after .dynamic, past the blind search (NVIDIA's libnvrtc.so.11.2 layout)") {
  // libnvrtc.so.11.2 (nvidia-cuda-nvrtc-cu11 11.8.89): .dynamic at 0x3400000, .dynstr right after it.
  std::string text(33u << 20, '\x90');
  std::string elf = make_elf(kCusparse, text, 0, true, true);
  for (size_t chunk : {4096, 1 << 16, 10 << 20}) {
    ElfDynamic d = scan(elf, chunk);
    CHECK(d.elf);
    CHECK(d.unread == 0);
    CHECK(d.needed == std::vector<std::string>{"libnvJitLink.so.12", "libdl.so.2", "libc.so.6"});
    CHECK(d.runpath == std::vector<std::string>{"$ORIGIN/../../nvjitlink/lib", "$ORIGIN"});
  }
  CHECK(scan(make_elf(kCusparse, std::string(64, 0), 0, true, true), 1).soname == "libcusparse.so.12");
}

TEST_CASE("elf dynamic: the test binary itself (a real linker's layout) needs libc.so.6") {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 4096);
  for (size_t chunk : {777, 1 << 16}) {
    ElfDynamic d = scan(bytes, chunk);
    CHECK(d.elf);
    CHECK(d.unread == 0);
    CHECK(std::count(d.needed.begin(), d.needed.end(), "libc.so.6") == 1);
  }
}
