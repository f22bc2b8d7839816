// The layer scanner fed arbitrary bytes (tar, gzip, zstd: detected from the bytes and
// inflated by image::InflatingReader: ISA-L / libzstd), three times on one tree so
// whiteouts and links meet entries of a lower layer: once by add_layer, then twice at
// once by add_layers (two scanning threads, merged in order); then every path is
// resolved through the symlinks it may contain. An input the first scan refuses stops
// there: the same bytes are refused again by the repeats (verify refuses the whole image at
// its first bad layer, so a tree under a refused layer never exists), and skipping them
// speeds the target up on the refused mutations most inputs are.
#include "fuzz/fuzz_common.h"
#include "image/blob.h"
#include "scan/contents_tree.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using imgtool::scan::ContentsTree;
  ContentsTree tree([](const std::string&, int64_t size) { return size < 4096; });
  std::string bytes = imgtool::fuzz::text(data, size);
  imgtool::image::StringReader in(bytes);
  if (!imgtool::fuzz::expect_refusal_or_result([&] { tree.add_layer(in, "fuzz layer"); })) return 0;
  auto open = [&bytes] { return std::make_unique<imgtool::image::StringReader>(bytes); };
  imgtool::fuzz::expect_refusal_or_result([&] {
    tree.add_layers({{"fuzz layer 1", open}, {"fuzz layer 2", open}}, 2);
  });
  for (auto& [path, entry] : tree.entries()) (void)tree.resolve(path);
  return 0;
}
