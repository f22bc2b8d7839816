// The layer scanner fed arbitrary bytes (tar, gzip, zstd: detected from the bytes), twice
// on one tree so whiteouts and links meet entries of a lower layer; then every path is
// resolved through the symlinks it may contain.
#include "fuzz/fuzz_common.h"
#include "image/blob.h"
#include "verify/contents_tree.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using imgtool::verify::ContentsTree;
  ContentsTree tree([](const std::string&, int64_t size) { return size < 4096; });
  std::string bytes = imgtool::fuzz::text(data, size);
  for (int layer = 0; layer < 2; ++layer) {
    imgtool::image::StringReader in(bytes);
    imgtool::fuzz::expect_refusal_or_result([&] { tree.add_layer(in, "fuzz layer"); });
  }
  for (auto& [path, entry] : tree.entries()) (void)tree.resolve(path);
  return 0;
}
