// One gzip member decoded on several cores (issue 9): the inflate side of
// compress.h, used by InflatingReader (inflate.h) for every gzip layer.
//
// compress.h ends each 1 MiB block of a layer with a full flush: an empty
// stored block (the bytes 00 00 FF FF, byte-aligned) after which nothing refers
// back. A reader thread reads the compressed blob (so its I/O and digest run
// beside the decoding), cuts it into chunks of about 2 MiB at such marks, and
// worker threads decode each chunk on its own (raw deflate, no history) while
// read() hands the output out in order.
//
// The speculation is checked, never trusted. A mark may be chance bytes in the
// data, or a sync flush after which blocks do refer back (pigz). A chunk's own
// decode is used only when
//   - the decoder of everything before it stopped exactly at the chunk's first
//     byte, at a block boundary, holding no bits (so the chunk truly starts a
//     block), and
//   - the chunk decoded without error (a decoder without history fails on any
//     reference before the chunk, ISAL_INVALID_LOOKBACK), and
//   - it gave at least the 32 KiB window (or ended the member), so whatever
//     follows finds the same history a sequential decoder would have.
// Otherwise the previous decoder carries on through the chunk in read()'s
// thread, exactly as a sequential inflate would: a stream without marks (gzip,
// Go, zlib) is read that way, its I/O still overlapped. The output is
// therefore byte for byte what a sequential decoder gives; only the speed
// depends on the marks. The trailer's CRC-32 and size are checked over
// everything read() returned.
//
// Bounded memory: at most jobs + 2 chunks in flight, a chunk at most 8 MiB of
// input (cut there without a mark, then decoded sequentially) and 32 MiB of
// speculative output (past that the worker stops and read() carries on):
// Limits, which tests make small.
#pragma once
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "image/image.h"

namespace imgtool::image {

// ISA-L's isal_inflate() error codes in words ("invalid deflate block", ...).
const char* isal_inflate_error(int rc);

struct GunzipLimits {
  size_t target = 2u << 20;       // cut at the first mark past this many input bytes
  size_t max_input = 8u << 20;    // no mark by then: cut anyway (a chunk read() decodes)
  size_t max_output = 32u << 20;  // a worker stops there; read() carries on
};

class ParallelGunzip {
 public:
  using Limits = GunzipLimits;
  // `first`: the bytes already read from `src` after the member's gzip header.
  // jobs: worker threads (plus one reading src); 0: no thread at all, read()
  // reads, cuts and decodes each chunk on its own itself, in order (the same
  // checks, deterministic: the fuzz target's mode).
  ParallelGunzip(BlobReader& src, std::vector<uint8_t> first, std::string where, unsigned jobs, Limits limits = {});
  ~ParallelGunzip();
  ParallelGunzip(const ParallelGunzip&) = delete;
  ParallelGunzip& operator=(const ParallelGunzip&) = delete;

  // Decoded bytes; 0 once the member's trailer has been read and checked.
  size_t read(uint8_t* out, size_t len);

  // What the reader thread read past the member, for the sequential reader to
  // go on with; stops the threads. Call once, after read() returned 0 or to
  // abandon the member (then `bytes` is empty).
  struct Rest {
    std::vector<uint8_t> bytes;  // read from src after the trailer
    bool eof = false;            // src returned 0
    std::exception_ptr error;    // src threw (kept for the next read of src)
  };
  Rest release();

  int64_t source_bytes() const;  // read from src so far
  struct Stats {
    size_t chunks = 0;    // chunks handed out
    size_t parallel = 0;  // of which decoded by a worker and used as decoded
  };
  Stats stats() const;
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace imgtool::image
