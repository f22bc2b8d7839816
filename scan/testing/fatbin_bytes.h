// Fat-binary bytes laid out as nvcc lays them out (scan/gpu_code.h describes the format), for
// tests that need a library holding GPU code without a CUDA compiler: the scanner's own tests and
// the synthetic wheels of kb/derive_test.cc.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace imgtool::scan::testing {

inline void put16(std::string& s, uint16_t v) { s.append({char(v & 0xff), char(v >> 8)}); }
inline void put32(std::string& s, uint32_t v) { put16(s, v & 0xffff), put16(s, v >> 16); }
inline void put64(std::string& s, uint64_t v) { put32(s, v & 0xffffffff), put32(s, v >> 32); }

struct FatEntry {
  uint16_t kind;  // 1 PTX, 2 cubin
  uint32_t arch;  // 80 = sm_80 / compute_80
  size_t payload;
  uint32_t header = 64;
};

inline std::string fat_entry(const FatEntry& e) {
  std::string s;
  put16(s, e.kind), put16(s, 0x0101), put32(s, e.header), put64(s, e.payload);
  put32(s, static_cast<uint32_t>(e.payload)), put32(s, 0), put16(s, 1), put16(s, 7), put32(s, e.arch);
  s.resize(e.header, '\0');
  return s + std::string(e.payload, '\x5a');
}

// One container: the 16-byte header and its entries.
inline std::string fat_container(const std::vector<FatEntry>& entries) {
  std::string body;
  for (auto& e : entries) body += fat_entry(e);
  std::string s;
  put32(s, 0xBA55ED50), put16(s, 1), put16(s, 16), put64(s, body.size());
  return s + body;
}

// A stand-in shared library: some bytes, then `containers` one after another (8-aligned), then more.
inline std::string fat_library(const std::vector<std::vector<FatEntry>>& containers) {
  std::string f =
      "\x7f"
      "ELF stand-in library";
  for (const auto& c : containers) {
    while (f.size() % 8) f.push_back('\0');
    f += fat_container(c);
  }
  return f + std::string(100, '\x01');
}

}  // namespace imgtool::scan::testing
