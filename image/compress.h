// Layer compression in one pass: the uncompressed tar goes in, compressed
// bytes come out (in order, to a sink), and both digests fall out at the end:
// diff_id = sha256(tar), digest = sha256(compressed).
//
//   gzip  zlib (level 1), parallel: the input is cut into 1 MiB blocks
//         deflated on `jobs` threads, each ending on a byte-aligned full flush,
//         concatenated into ONE standard gzip member (header, one deflate
//         stream, ISA-L's CRC-32 + size trailer), like pigz. A block whose 32 KiB
//         sample does not compress is written as deflate stored blocks (as
//         zlib does for such data), saving the matcher's CPU. Buffers are
//         recycled between blocks. One tar gives one blob (compress.cc says
//         why not ISA-L's deflate, which gave a few blocks another encoding).
//   zstd  libzstd with its own worker threads (ZSTD_c_nbWorkers).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace imgtool::image {

enum class Compression { kGzip, kZstd };

std::optional<Compression> parse_compression(const std::string& name);  // "gzip" | "zstd"
std::string compression_name(Compression c);
const char* oci_layer_media_type(Compression c);

// The exact encoder behind `c`: the library file and version, level, block size and this file's
// revision (kGzipRevision, raised whenever a change here changes the bytes). One tar and one
// encoder_id give one compressed blob; a blob another encoder made may be valid and still differ,
// so whatever keeps compressed layers by diff_id (LayerCache) keeps this beside them.
std::string encoder_id(Compression c);

struct CompressedLayer {
  std::string diff_id;  // sha256 of the uncompressed tar
  std::string digest;   // sha256 of the compressed bytes
  int64_t size = 0;     // compressed size
  int64_t uncompressed_size = 0;
};

class LayerCompressor {
 public:
  using Sink = std::function<void(const char*, size_t)>;
  LayerCompressor(Compression c, int jobs, Sink sink);
  ~LayerCompressor();
  void write(const char* data, size_t len);
  CompressedLayer finish();  // call once
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace imgtool::image
