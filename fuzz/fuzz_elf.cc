// An image's library bytes through the dynamic-section reader (scan/elf_dynamic.h): whatever the
// bytes, it ends without crashing within its memory caps, and the answer does not depend on how
// the bytes were chunked (a layer hands them out in libarchive's blocks): one byte at a time, a
// chunk size taken from the input, and all at once give the same NEEDED, SONAME, RPATH, RUNPATH.
#include <cstdlib>

#include "fuzz/fuzz_common.h"
#include "scan/elf_dynamic.h"

namespace {
imgtool::scan::ElfDynamic scan(const uint8_t* data, size_t size, size_t chunk) {
  imgtool::scan::ElfDynamicScanner s;
  for (size_t at = 0; at < size; at += chunk)
    s.feed(reinterpret_cast<const char*>(data) + at, std::min(chunk, size - at));
  return s.result();
}
bool same(const imgtool::scan::ElfDynamic& a, const imgtool::scan::ElfDynamic& b) {
  return a.elf == b.elf && a.soname == b.soname && a.needed == b.needed && a.rpath == b.rpath &&
         a.runpath == b.runpath && a.unread == b.unread;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto whole = scan(data, size, size ? size : 1);
  auto bytewise = scan(data, size, 1);
  auto chunked = scan(data, size, size ? 1 + data[size - 1] % 97 : 1);
  if (!same(whole, bytewise) || !same(whole, chunked)) std::abort();
  return 0;
}
