// ISA-L decoder states from one process-wide pool. A state is ~200 KiB; the layer
// reader takes one per gzip layer and the parallel gzip decoder one per chunk, most
// of them dropped soon after. A fresh block that size is an mmap whose pages fault in
// (under ASan every time: its large blocks are never recycled), so states are reused.
// A state comes back as raw memory: the caller runs isal_inflate_init(), which sets
// everything isal_inflate() reads.
#pragma once
#include <memory>

struct inflate_state;  // isa-l/igzip_lib.h

namespace imgtool::image {

struct InflateStateRelease {
  void operator()(inflate_state* s) const;  // back to the pool (or freed when it holds enough)
};
using InflateState = std::unique_ptr<inflate_state, InflateStateRelease>;

InflateState take_inflate_state();

}  // namespace imgtool::image
