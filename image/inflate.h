// Layer decompression as the blob streams: compressed bytes go in (from any
// BlobReader), tar bytes come out of read(), decoded straight into the
// caller's buffer (no intermediate copy). The inverse of compress.h.
//
//   gzip  ISA-L isal_inflate (crc_flag ISAL_GZIP: ISA-L parses the header and
//         checks the CRC-32 trailer). Members one after another are one stream
//         (RFC 1952 §2.2), as gzip, pigz and libarchive read them; bytes after
//         a member that do not begin another member end the stream and are
//         ignored (libarchive's rule, so verify accepts what it accepted).
//   zstd  libzstd's streaming decoder; frames one after another are one
//         stream; the window is bounded by libzstd's default limit (128 MiB).
//   none  anything else passes through unchanged (the tar reader decides).
// The codec is detected from the first bytes (magic numbers), never taken from
// a media type, so a mislabelled layer is read as what it is.
//
// Parallel gzip (issue 9): with jobs > 1 the first gzip member is decoded by
// gunzip_parallel.h (a reader thread reads `compressed`, workers decode the
// chunks between the full-flush marks compress.h writes; checked, so any gzip
// gives the same bytes); members after it are read here, one after another.
// jobs = 0: IMGTOOL_INFLATE_JOBS if set, else the cores (at most 8).
//
// Errors: a corrupt or truncated stream throws imgtool::Error naming `where`
// and the codec; an exception from the compressed reader propagates as it was
// (its type and retryable flag intact).
//
// Not thread-safe; one reader per layer (scan layers on separate threads).
#pragma once
#include <memory>
#include <string>

#include "image/image.h"

namespace imgtool::image {

enum class Codec { kNone, kGzip, kZstd };
std::string codec_name(Codec c);  // "none" | "gzip" | "zstd"

class InflatingReader : public BlobReader {
 public:
  // `compressed` must outlive this reader; it is read in 1 MiB chunks, from
  // another thread when gzip is decoded in parallel (never two at once).
  InflatingReader(BlobReader& compressed, std::string where, unsigned jobs = 0);
  ~InflatingReader() override;
  // Decompressed bytes; 0 at the end of the (last) member or frame.
  size_t read(char* buf, size_t len) override;
  Codec codec();                     // reads the first bytes if not yet done
  int64_t compressed_bytes() const;  // read from `compressed` so far
  int64_t decoded_bytes() const;     // returned by read() so far
  // Reads `compressed` to its end (where a blob reader checks its digest),
  // whatever read() has not needed; returns compressed_bytes() then.
  int64_t drain();
  size_t parallel_chunks() const;  // gzip chunks a worker decoded and read() used
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace imgtool::image
