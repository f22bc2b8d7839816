// Zip bytes written entry by entry, with the knobs a hostile wheel turns (a local header that
// names another file, an entry the central directory leaves out, an offset that points
// elsewhere): the tests of kb/zip.h and kb/wheel.h. Layout per PKWARE APPNOTE.TXT (kb/zip.h).
#pragma once
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "scan/testing/fatbin_bytes.h"

namespace imgtool::kb::testing {

using scan::testing::put16;
using scan::testing::put32;

struct ZipFile {
  std::string name, data;
  bool deflate = false;
  std::string local_name;     // "" = name; else the local header names this instead
  bool listed = true;         // false: in the file, not in the central directory
  int local_method = -1;      // -1 = the directory's method
  uint32_t offset_shift = 0;  // added to the offset the directory records
};

inline std::string raw_deflate(const std::string& in) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// The 26 bytes a local header and a central directory header share from "version needed" on,
// less the two name/extra lengths.
inline void common_fields(std::string& s, uint16_t method, const ZipFile& f, const std::string& body) {
  put16(s, 20), put16(s, 0), put16(s, method), put16(s, 0), put16(s, 0x21);
  put32(s, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(f.data.data()), f.data.size())));
  put32(s, static_cast<uint32_t>(body.size())), put32(s, static_cast<uint32_t>(f.data.size()));
}

// `prefix` goes before the first entry (offsets count it, as a self-extractor's would).
inline std::string zip_bytes(const std::vector<ZipFile>& files, const std::string& prefix = "") {
  std::string out = prefix, dir;
  uint16_t listed = 0;
  for (const auto& f : files) {
    std::string body = f.deflate ? raw_deflate(f.data) : f.data;
    uint16_t method = f.deflate ? 8 : 0;
    std::string local_name = f.local_name.empty() ? f.name : f.local_name;
    uint32_t offset = static_cast<uint32_t>(out.size());
    put32(out, 0x04034b50);
    common_fields(out, f.local_method < 0 ? method : static_cast<uint16_t>(f.local_method), f, body);
    put16(out, static_cast<uint16_t>(local_name.size())), put16(out, 0);
    out += local_name + body;
    if (!f.listed) continue;
    put32(dir, 0x02014b50), put16(dir, 20);
    common_fields(dir, method, f, body);
    put16(dir, static_cast<uint16_t>(f.name.size())), put16(dir, 0), put16(dir, 0), put16(dir, 0), put16(dir, 0);
    put32(dir, 0), put32(dir, offset + f.offset_shift);
    dir += f.name;
    ++listed;
  }
  uint32_t dir_at = static_cast<uint32_t>(out.size());
  out += dir;
  put32(out, 0x06054b50), put16(out, 0), put16(out, 0), put16(out, listed), put16(out, listed);
  put32(out, static_cast<uint32_t>(dir.size())), put32(out, dir_at), put16(out, 0);
  return out;
}

// The files of a small GPU wheel (paddlepaddle-gpu 3.3.1, CUDA `cuda`), version file `version_py`.
inline std::vector<ZipFile> gpu_wheel_files(const std::string& version_py) {
  std::string lib = scan::testing::fat_library({{{2, 80, 64}, {2, 90, 64}}});
  return {{"paddle/version/__init__.py", version_py, true},
          {"paddle/libs/libphi_gpu.so", lib, true},
          {"paddlepaddle_gpu-3.3.1.dist-info/METADATA",
           "Metadata-Version: 2.1\nName: paddlepaddle-gpu\nVersion: 3.3.1\nRequires-Python: >=3.9\n\nbody\n"},
          {"paddlepaddle_gpu-3.3.1.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: cp312-cp312-manylinux1_x86_64\n"}};
}

}  // namespace imgtool::kb::testing
