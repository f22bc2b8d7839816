// The GPU code compiled into a shared library: which architectures its NVIDIA fat binaries hold
// machine code (cubin, "sm_80") or PTX ("compute_80") for, and so which GPUs it can run on.
//
// Data model
//   A CUDA library carries its kernels in fat-binary CONTAINERS (one per compiled .cu file,
//   packed in the ELF section .nv_fatbin, 8-byte aligned). Each container holds ENTRIES, one per
//   target: a cubin for one sm_XY, or PTX for one compute_XY. GpuCode counts, per architecture,
//   the containers holding code for it (a library is only usable on a GPU when most of its
//   containers can serve that GPU: one stray third-party kernel built for sm_90 does not make
//   Paddle 2.6 run on an H100).
//
// Format (no NVIDIA specification exists; the public descriptions agree): a container is a
// 16-byte header {u32 magic 0xBA55ED50, u16 version 1, u16 header_size, u64 fat_size} and
// fat_size bytes of entries; an entry header is {u16 kind (1 PTX, 2 cubin), u16 version,
// u32 header_size, u64 payload_size, …, u32 arch at +28}; the next entry follows at
// header_size + payload_size. Sources: GrigoryEvko/nvopen-tools fatbin/FORMAT_SPECIFICATION.md
// (commit 3b50e20), vosen/ZLUDA zluda_dump/src/dark_api.rs FatbinHeader/FatbinFileHeader
// (commit 7affc1d).
//
// FatbinScanner reads a file as a STREAM (the bytes of a tar entry in a layer, of a zip entry in
// a wheel) in one pass and never holds more than a header: it looks for the magic at 8-byte
// aligned file offsets, walks each container's entries and skips their payloads. A container
// counts only when every entry parses and fits it, so code bytes that happen to hold the magic
// (cudart compares against it) are not taken for a container. Contract: feed() the file's bytes
// in order, then read result(); bad bytes are never an error, they are simply not code.
//
// The container being walked costs fixed memory whatever its entry count: two bitsets of the
// architectures seen (an entry's arch is 10..999 or the container is no container), never a
// record per entry; a container of 2^34 bytes holds up to 2^29 entries, and the scanner runs over
// zip-bomb wheels (kb derive) and every library of an image (the release gate). The result is fixed
// size too: GpuCode counts containers per arch and per compute capability served (core/gpu_arch.h),
// never a record per container shape. Only the containers walked but not yet counted (`Walked`,
// until the file's end) grow with the input, one small record each.
#pragma once
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/gpu_arch.h"

namespace imgtool::scan {

using imgtool::GpuCode;  // the model lives in core (core/gpu_arch.h)

// One file's bytes, in order, in any chunk sizes.
class FatbinScanner {
 public:
  void feed(const char* data, size_t n);
  const GpuCode& result() const { return code_; }

 private:
  enum class Mode { kSearch, kEntry };  // looking for a container / walking one's entries
  void run(const unsigned char* p, uint64_t at, size_t len);
  void container_header(const unsigned char* h);
  void entry_header(const unsigned char* h);
  void end_container();
  void drop_container();
  void commit_walked();

  Mode mode_ = Mode::kSearch;
  uint64_t offset_ = 0;  // file offset of the next byte fed
  uint64_t next_ = 0;    // file offset of the next header to read (8-aligned while searching)
  std::string carry_;    // the start of a header the last chunk ended in (< 32 bytes)
  uint64_t carry_at_ = 0;
  uint64_t container_ = 0, container_end_ = 0;
  // Archs the container being walked holds code for; entry_header() refuses an arch outside 10..999.
  static constexpr int kArchLimit = 1000;
  std::bitset<kArchLimit> cur_cubin_, cur_ptx_;
  struct Walked {  // a container whose entries are all read, counted once the file reaches its end
    // (each list sorted and unique, at most kArchLimit long)
    uint64_t end;
    std::vector<int> cubins, ptxs;
  };
  std::optional<Walked> walked_;
  GpuCode code_;
};

}  // namespace imgtool::scan
