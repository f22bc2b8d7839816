#include "scan/elf_dynamic.h"

#include <algorithm>
#include <cstring>

#include "core/strings.h"

namespace imgtool::scan {

namespace {

constexpr size_t kEhdr = 64, kPhdr = 56, kDyn = 16;
constexpr uint32_t kPtLoad = 1, kPtDynamic = 2;
constexpr int64_t kDtNull = 0, kDtNeeded = 1, kDtStrtab = 5, kDtStrsz = 10, kDtSoname = 14, kDtRpath = 15,
                  kDtRunpath = 29;
// Strings are searched for in the first 32 MiB only until .dynamic is read: .dynstr sits near
// the start (after .dynsym), and a library of 500 MB must not be walked byte by byte.
constexpr uint64_t kStringScan = 32ull << 20;

template <typename T>
T read_le(const std::string& s, size_t at) {
  T v;
  std::memcpy(&v, s.data() + at, sizeof v);  // x86_64 and aarch64 hosts are little-endian
  return v;
}

bool keepable(const std::string& s) {
  if (s.empty()) return false;
  if (s[0] == '/' || s[0] == '$') return true;
  return (s.rfind("lib", 0) == 0 || s.rfind("ld-", 0) == 0) && s.find(".so") != std::string::npos;
}

bool name_tag(int64_t tag) { return tag == kDtNeeded || tag == kDtSoname || tag == kDtRpath || tag == kDtRunpath; }

}  // namespace

void ElfDynamicScanner::feed(const char* p, size_t n) {
  if (done()) {
    pos_ += n;
    return;
  }
  if (!have_headers_) feed_headers(p, n);
  // .dynamic first: when it ends inside this chunk, .dynstr may start right after it (NVIDIA's
  // libraries put .dynstr after .dynamic, 52 MB into libnvrtc.so.11.2), past the blind search.
  if (!dead_ && have_headers_ && !have_dynamic_) feed_dynamic(p, n, pos_);
  if (!dead_) feed_strings(p, n, pos_);
  pos_ += n;
  if (have_dynamic_ && pos_ >= str_end_ && !in_string_) finished_ = true;
}

void ElfDynamicScanner::feed_headers(const char* p, size_t n) {
  size_t want = kEhdr;
  if (headers_.size() >= kEhdr) {
    uint64_t phoff = read_le<uint64_t>(headers_, 0x20);
    want = static_cast<size_t>(phoff + uint64_t{read_le<uint16_t>(headers_, 0x38)} * kPhdr);
  }
  size_t used = 0;
  while (!have_headers_ && !dead_ && used < n) {
    size_t take = std::min(n - used, want - headers_.size());
    headers_.append(p + used, take);
    used += take;
    if (headers_.size() < want) return;
    if (want == kEhdr) {
      if (headers_.compare(0, 4,
                           "\x7f"
                           "ELF") != 0 ||
          headers_[4] != 2 || headers_[5] != 1 || read_le<uint16_t>(headers_, 0x36) != kPhdr) {
        dead_ = true;
        return;
      }
      uint64_t phoff = read_le<uint64_t>(headers_, 0x20), phnum = read_le<uint16_t>(headers_, 0x38);
      if (phoff < kEhdr || phoff > kMaxHeaders || phoff + phnum * kPhdr > kMaxHeaders) {
        dead_ = true;
        return;
      }
      want = static_cast<size_t>(phoff + phnum * kPhdr);
      if (want > kEhdr) continue;
    }
    parse_headers();
  }
}

void ElfDynamicScanner::parse_headers() {
  have_headers_ = true;
  uint64_t phoff = read_le<uint64_t>(headers_, 0x20), phnum = read_le<uint16_t>(headers_, 0x38);
  bool dynamic = false;
  for (uint64_t i = 0; i < phnum; ++i) {
    size_t at = static_cast<size_t>(phoff + i * kPhdr);
    uint32_t type = read_le<uint32_t>(headers_, at);
    uint64_t offset = read_le<uint64_t>(headers_, at + 8), vaddr = read_le<uint64_t>(headers_, at + 16),
             filesz = read_le<uint64_t>(headers_, at + 32);
    if (type == kPtLoad) loads_.push_back({vaddr, offset, filesz});
    if (type == kPtDynamic && !dynamic) dynamic = true, dyn_off_ = offset, dyn_size_ = filesz;
  }
  // The second window of the blind search: up to 32 MiB before .dynamic, inside its segment
  // (libcusparseLt.so.0 puts a 9 MB .dynstr there, 228 MB into the file).
  for (const auto& l : loads_)
    if (dynamic && dyn_off_ >= l.offset && dyn_off_ - l.offset < l.filesz)
      near_off_ = std::max(l.offset, dyn_off_ > kStringScan ? dyn_off_ - kStringScan : 0), near_end_ = dyn_off_;
  headers_.clear();
  headers_.shrink_to_fit();
  if (!dynamic) {  // a static binary: it needs nothing
    have_dynamic_ = finished_ = true;
    return;
  }
  // A dynamic section inside the headers (or empty, or beyond the cap) is no linker's output.
  if (dyn_size_ == 0 || dyn_size_ > kMaxDynamic || dyn_size_ % kDyn != 0 || dyn_off_ < phoff + phnum * kPhdr)
    dead_ = true;
}

void ElfDynamicScanner::feed_dynamic(const char* p, size_t n, uint64_t at) {
  uint64_t from = std::max(at, dyn_off_ + dynamic_.size()), to = std::min(at + n, dyn_off_ + dyn_size_);
  if (dynamic_.empty() && at > dyn_off_) {  // the headers came after it (or it overlaps them)
    dead_ = true;
    return;
  }
  if (from >= to) return;
  dynamic_.append(p + (from - at), static_cast<size_t>(to - from));
  if (dynamic_.size() == dyn_size_) parse_dynamic();
}

void ElfDynamicScanner::parse_dynamic() {
  have_dynamic_ = true;
  uint64_t strtab = 0, strsz = 0;
  for (size_t at = 0; at + kDyn <= dynamic_.size(); at += kDyn) {
    int64_t tag = read_le<int64_t>(dynamic_, at);
    uint64_t val = read_le<uint64_t>(dynamic_, at + 8);
    if (tag == kDtNull) break;
    if (tag == kDtStrtab) strtab = val;
    if (tag == kDtStrsz) strsz = val;
    if (name_tag(tag)) entries_.push_back({tag, val});
  }
  dynamic_.clear();
  dynamic_.shrink_to_fit();
  auto load = std::find_if(loads_.begin(), loads_.end(),
                           [&](const Load& l) { return strtab >= l.vaddr && strtab - l.vaddr < l.filesz; });
  if (load == loads_.end() || strsz > (uint64_t{1} << 40)) {
    str_off_ = str_end_ = 0;  // every name unread
  } else {
    str_off_ = load->offset + (strtab - load->vaddr);
    str_end_ = str_off_ + strsz;
  }
  for (auto it = strings_.begin(); it != strings_.end();) it = wanted(it->first) ? std::next(it) : strings_.erase(it);
}

bool ElfDynamicScanner::wanted(uint64_t offset) const {
  if (have_dynamic_) return offset >= str_off_ && offset < str_end_;
  return offset < kStringScan || (offset >= near_off_ && offset < near_end_);
}

void ElfDynamicScanner::end_string() {
  if (!overlong_ && wanted(string_at_) && keepable(string_)) {
    // Before .dynamic is read, each window has its own budget (source paths in .rodata can fill the
    // first; .dynstr may be in the second).
    size_t& kept = string_at_ >= near_off_ && string_at_ < near_end_ ? kept_near_ : kept_start_;
    if (have_dynamic_ || kept < kMaxStrings)
      strings_.emplace(string_at_, string_), ++kept;
    else
      strings_capped_ = true;
  }
  in_string_ = overlong_ = false;
  string_.clear();
}

// Strings that start after a NUL with 'l', '/' or '$', each read to its NUL (memchr), in the range
// wanted() names; elsewhere only the last byte is tracked.
void ElfDynamicScanner::feed_strings(const char* p, size_t n, uint64_t at) {
  size_t i = 0;
  while (i < n) {
    if (in_string_) {
      const char* z = static_cast<const char*>(std::memchr(p + i, 0, n - i));
      size_t len = z ? static_cast<size_t>(z - (p + i)) : n - i;
      if (!overlong_ && string_.size() + len > kMaxString) overlong_ = true, string_.clear();
      if (!overlong_) string_.append(p + i, len);
      i += len;
      if (!z) break;
      end_string();
      prev_ = 0;
      ++i;
      continue;
    }
    if (!wanted(at + i)) {
      uint64_t next = have_dynamic_ ? str_off_ : near_off_;  // where the search starts again
      if (at + i < next && next < at + n) {
        prev_ = p[next - at - 1];
        i = static_cast<size_t>(next - at);
        continue;
      }
      prev_ = p[n - 1];
      return;
    }
    char c = p[i];
    if (prev_ == 0 && (c == 'l' || c == '/' || c == '$')) {
      in_string_ = true;
      string_at_ = at + i;
      continue;
    }
    prev_ = c;
    ++i;
  }
}

ElfDynamic ElfDynamicScanner::result() const {
  ElfDynamic d;
  if (!have_dynamic_ || dead_) return d;
  d.elf = true;
  for (const auto& [tag, val] : entries_) {
    std::string s;
    bool found = false;
    if (str_end_ > str_off_ && val < str_end_ - str_off_) {
      uint64_t at = str_off_ + val;
      auto it = strings_.upper_bound(at);  // the kept string holding `at` (linkers merge suffixes)
      if (it != strings_.begin() && (--it, at - it->first < it->second.size()))
        s = it->second.substr(static_cast<size_t>(at - it->first)), found = true;
    }
    if (!found) {
      ++d.unread;
      continue;
    }
    if (tag == kDtNeeded) d.needed.push_back(s);
    if (tag == kDtSoname) d.soname = s;
    auto& list = tag == kDtRpath ? d.rpath : d.runpath;
    if (tag == kDtRpath || tag == kDtRunpath)
      for (auto& part : strings::split(s, ':'))
        if (!part.empty()) list.push_back(part);
  }
  return d;
}

}  // namespace imgtool::scan
