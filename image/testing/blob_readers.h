// Test doubles for BlobReader, shipped beside the model (tests of inflate,
// the parallel decoder and the layer scanner share them).
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>

#include "core/error.h"
#include "image/image.h"

namespace imgtool::image::testing {

// Serves the first half of its bytes (at most `piece` a call), then throws a
// retryable Error, as a cut connection does: "connection cut by the test".
struct CutReader : BlobReader {
  explicit CutReader(std::string b, size_t piece = static_cast<size_t>(-1)) : bytes(std::move(b)), max_piece(piece) {}
  size_t read(char* buf, size_t len) override {
    if (pos >= bytes.size() / 2) throw Error("connection cut by the test", true);
    size_t n = std::min({len, bytes.size() / 2 - pos, max_piece});
    std::copy_n(bytes.data() + pos, n, buf);
    pos += n;
    return n;
  }
  std::string bytes;
  size_t max_piece;
  size_t pos = 0;
};

}  // namespace imgtool::image::testing
