// A byte vector whose resize() does not zero-fill: for I/O and codec buffers
// that are written right after they grow (a 1 MiB read buffer zeroed per layer
// was most of the layer fuzzer's time: page faults and memset).
#pragma once
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace imgtool {

template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) {}
  template <class U>
  void construct(U* p) {
    ::new (static_cast<void*>(p)) U;  // default-initialised: left as it is
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using Buffer = std::vector<uint8_t, NoInitAllocator<uint8_t>>;

}  // namespace imgtool
