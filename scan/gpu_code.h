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
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace imgtool::scan {

struct GpuCode {
  int containers = 0;
  std::map<int, int> cubin;  // arch (80 = sm_80) -> containers holding a cubin for it
  std::map<int, int> ptx;    // arch (80 = compute_80) -> containers holding PTX for it

  bool empty() const { return containers == 0; }
  // Architectures present in at least half of the containers (the library's own targets, not a
  // stray third-party kernel's).
  std::vector<int> main_cubins() const;
  std::vector<int> main_ptx() const;
  // Containers that hold code a GPU of compute capability `cc` (86 = 8.6) can run: a cubin of
  // the same major with a minor not above its own, or PTX for an arch not above it (the driver
  // JIT-compiles it).
  int runnable_on(int cc) const;
  void merge(const GpuCode& other);
  void add_container(const std::vector<int>& cubins, const std::vector<int>& ptxs);  // each sorted, unique
  // "sm_61,sm_70,sm_75,sm_80,sm_86" (+ ",compute_86" for PTX): the main targets, the form of the
  // io.imgtool.cuda-archs label and the KB's compiled_archs.
  std::string text() const;

  // Distinct container shapes (its cubin archs, its PTX archs) -> how many containers have it:
  // what runnable_on() needs (a container serves a GPU through any one of its entries).
  std::map<std::pair<std::vector<int>, std::vector<int>>, int> shapes;
};

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
  std::vector<int> cur_cubin_, cur_ptx_;  // entries of the container being walked
  struct Walked {  // a container whose entries are all read, counted once the file reaches its end
    uint64_t end;
    std::vector<int> cubins, ptxs;
  };
  std::optional<Walked> walked_;
  GpuCode code_;
};

// "sm_86" / "compute_80" / "8.6" / "86" -> 86; nullopt otherwise.
std::optional<int> parse_arch(const std::string& text);
// Parses the text() form back: nullopt for a malformed list.
std::optional<GpuCode> parse_archs(const std::string& text);
// 86 -> "8.6".
std::string cc_text(int cc);

}  // namespace imgtool::scan
