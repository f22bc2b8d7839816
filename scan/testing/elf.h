// Test helper: a minimal 64-bit LE ELF shared library whose dynamic section names what a test
// needs (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH), laid out as a linker lays one out.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace imgtool::scan::testing {

// A minimal 64-bit LE shared library as a linker lays one out: headers, .dynstr, "text" (holding
// decoy strings), .dynamic; one PT_LOAD maps the file at vaddr 0x1000 past offset 0.
struct Dyn {
  int64_t tag;
  std::string str;   // a name (its offset in .dynstr is filled in)
  uint64_t val = 0;  // or a raw value
};

template <typename T>
inline void put(std::string& s, size_t at, T v) {
  std::memcpy(s.data() + at, &v, sizeof v);
}

inline std::string make_elf(const std::vector<Dyn>& dyns, const std::string& text = std::string(4096, '\x90'),
                            uint64_t strtab_shift = 0, bool with_dynamic = true, bool dynstr_last = false) {
  const uint64_t vbase = 0x1000;
  std::string dynstr(1, '\0');
  std::vector<uint64_t> offs;
  for (const auto& d : dyns) {
    if (d.str.empty()) {
      offs.push_back(d.val);
      continue;
    }
    size_t at = dynstr.find(d.str + '\0');
    if (at == std::string::npos) at = dynstr.size(), dynstr += d.str + '\0';
    offs.push_back(at);
  }
  // Headers, then .dynstr + text + .dynamic, or (dynstr_last, NVIDIA's layout) text + .dynamic + .dynstr.
  std::string f(64 + 2 * 56, '\0');
  const size_t dyn_size = (dyns.size() + 3) * 16;
  const size_t dynamic = f.size() + text.size() + (dynstr_last ? 0 : dynstr.size());
  const size_t strtab = dynstr_last ? dynamic + dyn_size : f.size();
  std::string dyn;
  auto entry = [&](int64_t tag, uint64_t val) {
    std::string e(16, '\0');
    put(e, 0, tag), put(e, 8, val);
    dyn += e;
  };
  for (size_t i = 0; i < dyns.size(); ++i) entry(dyns[i].tag, offs[i]);
  entry(5, vbase + strtab + strtab_shift);  // DT_STRTAB (a vaddr)
  entry(10, dynstr.size());                 // DT_STRSZ
  entry(0, 0);
  f += dynstr_last ? text + dyn + dynstr : dynstr + text + dyn;
  std::memcpy(f.data(),
              "\x7f"
              "ELF\x02\x01\x01",
              7);
  put<uint16_t>(f, 0x10, 3);  // ET_DYN
  put<uint16_t>(f, 0x12, 62);
  put<uint64_t>(f, 0x20, 64);  // e_phoff
  put<uint16_t>(f, 0x36, 56);
  put<uint16_t>(f, 0x38, with_dynamic ? 2 : 1);
  auto phdr = [&](size_t i, uint32_t type, uint64_t off, uint64_t vaddr, uint64_t size) {
    size_t at = 64 + i * 56;
    put(f, at, type), put(f, at + 8, off), put(f, at + 16, vaddr), put(f, at + 32, size);
  };
  phdr(0, 1, 0, vbase, f.size());
  if (with_dynamic) phdr(1, 2, dynamic, vbase + dynamic, dyn.size());
  return f;
}

// The common case: a library with these NEEDED names, SONAME and RUNPATH (or RPATH: rpath = true).
inline std::string elf_library(const std::vector<std::string>& needed, const std::string& soname = "",
                               const std::string& path = "", bool rpath = false) {
  std::vector<Dyn> d;
  for (const auto& n : needed) d.push_back({1, n});
  if (!soname.empty()) d.push_back({14, soname});
  if (!path.empty()) d.push_back({rpath ? 15 : 29, path});
  return make_elf(d);
}

}  // namespace imgtool::scan::testing
