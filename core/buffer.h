// A byte buffer that never initialises what it grows into: for I/O and codec
// buffers that are written right after they grow. std::vector<uint8_t> zero-fills
// on resize (a 1 MiB read buffer per layer made most of the layer fuzzer's time
// page faults and memset), and a no-init allocator still constructs element by
// element, a loop that instrumented builds keep. One new[] per growth, memcpy of
// the bytes kept, nothing else.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

namespace imgtool {

class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t n) { resize(n); }
  Buffer(Buffer&&) noexcept = default;
  Buffer& operator=(Buffer&&) noexcept = default;

  uint8_t* data() { return p_.get(); }
  const uint8_t* data() const { return p_.get(); }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  uint8_t* begin() { return p_.get(); }
  uint8_t* end() { return p_.get() + n_; }
  const uint8_t* begin() const { return p_.get(); }
  const uint8_t* end() const { return p_.get() + n_; }

  // Growing keeps the first size() bytes; the new ones are left as they are.
  void resize(size_t n) {
    if (n > cap_) {
      size_t cap = std::max(n, cap_ + cap_ / 2);
      std::unique_ptr<uint8_t[]> q(new uint8_t[cap]);
      if (n_) std::memcpy(q.get(), p_.get(), n_);
      p_ = std::move(q);
      cap_ = cap;
    }
    n_ = n;
  }
  void assign(const uint8_t* first, const uint8_t* last) {
    size_t n = static_cast<size_t>(last - first);
    n_ = 0;
    resize(n);
    if (n) std::memcpy(p_.get(), first, n);
  }
  void release() {  // gives the memory back
    p_.reset();
    n_ = cap_ = 0;
  }

 private:
  std::unique_ptr<uint8_t[]> p_;
  size_t n_ = 0, cap_ = 0;
};

}  // namespace imgtool
