// Differential: arbitrary bytes decoded as a gzip member's deflate stream by
// image::ParallelGunzip (tiny limits, so a few bytes make many chunks, marks and
// speculative decodes; its thread-less mode, so that a finding replays exactly; the
// threads are gunzip_parallel_test's) and by a plain sequential ISA-L inflate must give the same
// bytes, or both refuse. A difference is the speculation used where it must not be
// (gunzip_parallel.h's rule), and aborts as a crash.
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "image/blob.h"
#include "image/gunzip_parallel.h"

namespace {

// Both sides stop (refuse) past this much output: 8 of the parallel side's 64 KiB chunk
// outputs, so "a worker filled its output, read() carries on" is reached, while a bomb of
// compressible input costs little (at 4 MiB, growing the two outputs was 40% of the time).
constexpr size_t kMaxOutput = 1 << 19;

// The reference: one raw-deflate decoder, the whole input, then the 8-byte trailer. Its state
// (~200 KiB) and buffer are made once: a fresh one per input was most of the target's time
// (zero-fill and page faults of an mmap under ASan).
bool sequential(const std::string& in, std::string& out) {
  static auto* s = new inflate_state;
  static std::vector<uint8_t> buf(1 << 16);
  isal_inflate_init(s);
  s->crc_flag = ISAL_DEFLATE;
  s->next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(in.data()));
  s->avail_in = static_cast<uint32_t>(in.size());
  while (s->block_state != ISAL_BLOCK_FINISH) {
    s->next_out = buf.data();
    s->avail_out = static_cast<uint32_t>(buf.size());
    if (isal_inflate(s) < 0) return false;
    size_t n = s->next_out - buf.data();
    out.append(reinterpret_cast<char*>(buf.data()), n);
    if (out.size() > kMaxOutput) return false;                        // nor is the parallel side asked past it
    if (n == 0 && s->block_state != ISAL_BLOCK_FINISH) return false;  // truncated
  }
  size_t used = in.size() - s->avail_in - s->read_in_length / 8;
  if (in.size() - used < 8) return false;
  auto le32 = [&](size_t at) {
    const auto* p = reinterpret_cast<const uint8_t*>(in.data() + at);
    return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24;
  };
  uint32_t crc = crc32_gzip_refl(0, reinterpret_cast<const uint8_t*>(out.data()), out.size());
  return le32(used) == crc && le32(used + 4) == static_cast<uint32_t>(out.size());
}

bool parallel(const std::string& in, std::string& out) {
  imgtool::image::StringReader src(in);
  imgtool::image::ParallelGunzip g(src, {}, "fuzz", 0, {128, 1024, 1 << 16});  // no threads: deterministic
  std::vector<uint8_t> buf(777);
  try {
    while (size_t n = g.read(buf.data(), buf.size())) {
      out.append(reinterpret_cast<char*>(buf.data()), n);
      if (out.size() > kMaxOutput) return false;
    }
  } catch (const imgtool::Error&) {
    return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in = imgtool::fuzz::text(data, size), a, b;
  bool ok_a = sequential(in, a), ok_b = parallel(in, b);
  if (ok_a != ok_b || (ok_a && a != b)) {
    std::fprintf(stderr, "fuzz_gunzip: sequential %s (%zu bytes), parallel %s (%zu bytes)\n", ok_a ? "ok" : "refused",
                 a.size(), ok_b ? "ok" : "refused", b.size());
    std::abort();
  }
  return 0;
}
