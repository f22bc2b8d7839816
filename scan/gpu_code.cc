#include "scan/gpu_code.h"

#include <algorithm>
#include <cstring>

namespace imgtool::scan {

namespace {

constexpr uint32_t kMagic = 0xBA55ED50;
constexpr size_t kContainerHeader = 16;  // bytes read of a container header
constexpr size_t kEntryHeader = 32;      // bytes read of an entry header (up to its arch)
constexpr uint64_t kMaxFatSize = 1ull << 34;

uint16_t u16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
uint32_t u32(const unsigned char* p) { return u16(p) | static_cast<uint32_t>(u16(p + 2)) << 16; }
uint64_t u64(const unsigned char* p) { return u32(p) | static_cast<uint64_t>(u32(p + 4)) << 32; }
uint64_t align8(uint64_t v) { return (v + 7) & ~uint64_t{7}; }

// Entry kinds: 1 PTX; 2 cubin (ELF); 16 cubin in the newer containers. Others are parsed past.
enum class Kind { kPtx, kCubin, kOther };
Kind kind_of(uint16_t k) { return k == 1 ? Kind::kPtx : (k == 2 || k == 16) ? Kind::kCubin : Kind::kOther; }

template <size_t N>
std::vector<int> sorted_archs(const std::bitset<N>& set) {
  std::vector<int> out;
  for (size_t a = 0; a < N; ++a)
    if (set[a]) out.push_back(static_cast<int>(a));
  return out;
}

}  // namespace

void FatbinScanner::commit_walked() {
  if (walked_ && walked_->end <= offset_) {
    code_.add_container(walked_->cubins, walked_->ptxs);
    walked_.reset();
  }
}

void FatbinScanner::feed(const char* data, size_t n) {
  uint64_t base = offset_;
  offset_ += n;
  commit_walked();
  if (!carry_.empty()) {  // a header split across feeds: join its start with this chunk's first bytes
    size_t k = std::min(n, kEntryHeader);
    std::string joint = carry_ + std::string(data, k);
    uint64_t at = carry_at_;
    carry_.clear();
    run(reinterpret_cast<const unsigned char*>(joint.data()), at, joint.size());
    if (next_ < at + joint.size() && k == n) {  // still short: all of this chunk is in the joint view
      carry_ = joint.substr(next_ - at);
      carry_at_ = next_;
      return;
    }
  }
  run(reinterpret_cast<const unsigned char*>(data), base, n);
  if (next_ < base + n) {
    carry_.assign(data + (next_ - base), base + n - next_);
    carry_at_ = next_;
  }
}

// Handles every header that lies whole in [at, at + len); stops where one does not.
void FatbinScanner::run(const unsigned char* p, uint64_t at, size_t len) {
  uint64_t end = at + len;
  while (next_ < end) {
    if (mode_ == Mode::kSearch) {
      uint64_t q = next_;
      while (q + kContainerHeader <= end && u32(p + (q - at)) != kMagic) q += 8;
      next_ = q;
      if (q + kContainerHeader > end) return;
      container_header(p + (q - at));
      continue;
    }
    if (next_ + kEntryHeader > end) return;
    entry_header(p + (next_ - at));
  }
}

void FatbinScanner::container_header(const unsigned char* h) {
  uint16_t version = u16(h + 4), header = u16(h + 6);
  uint64_t fat = u64(h + 8);
  if (version != 1 || header < kContainerHeader || header > 256 || header % 8 || fat == 0 || fat > kMaxFatSize) {
    next_ += 8;
    return;
  }
  container_ = next_;
  container_end_ = next_ + header + fat;
  cur_cubin_.reset();
  cur_ptx_.reset();
  next_ += header;
  mode_ = Mode::kEntry;
  if (container_end_ - next_ < kEntryHeader) drop_container();
}

void FatbinScanner::entry_header(const unsigned char* h) {
  uint32_t header = u32(h + 4), arch = u32(h + 28);
  uint64_t payload = u64(h + 8), after = next_ + header + payload;
  bool sane = header >= kEntryHeader && header <= 4096 && after <= container_end_ && after > next_ && arch >= 10 &&
              arch < kArchLimit;
  if (!sane) return drop_container();
  Kind k = kind_of(u16(h));
  if (k == Kind::kCubin) cur_cubin_.set(arch);
  if (k == Kind::kPtx) cur_ptx_.set(arch);
  next_ = after;
  if (container_end_ - next_ < kEntryHeader) end_container();
}

void FatbinScanner::end_container() {
  // It counts once the file has reached its end (a file cut short inside it holds no such code).
  if (cur_cubin_.any() || cur_ptx_.any())
    walked_ = Walked{container_end_, sorted_archs(cur_cubin_), sorted_archs(cur_ptx_)};
  commit_walked();
  next_ = align8(container_end_);
  mode_ = Mode::kSearch;
}

// Not a container after all (bytes that hold the magic by chance): look on from here. The bytes
// of the entries already passed are gone from the stream; a real container cannot start in them.
void FatbinScanner::drop_container() {
  next_ = std::max(align8(next_), container_ + 8);
  mode_ = Mode::kSearch;
}

}  // namespace imgtool::scan
