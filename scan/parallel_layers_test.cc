// ContentsTree::add_layers: layers read on several threads, merged in layer
// order. Lower layers are made slow on purpose so upper ones finish first:
// whiteouts, opaque dirs, overrides and hard links must still mean what they
// mean when the layers are added one by one; caps hold over all layers; an
// error stops the scan and comes back as it was.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "core/error.h"
#include "image/blob.h"
#include "image/compress.h"
#include "scan/contents_facts.h"
#include "scan/contents_tree.h"
#include "scan/testing/layers.h"
#include "tests/error_of.h"

using namespace imgtool;
using namespace imgtool::scan;
using namespace imgtool::scan::testing;

using imgtool::testing::error_of;

namespace {

// Waits before its first byte (a slow layer), then serves `bytes`.
struct SlowReader : image::BlobReader {
  SlowReader(std::string b, int delay_ms) : bytes(std::move(b)), delay(delay_ms) {}
  size_t read(char* buf, size_t len) override {
    if (pos == 0 && delay > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    size_t n = std::min(len, bytes.size() - pos);
    std::copy_n(bytes.data() + pos, n, buf);
    pos += n;
    return n;
  }
  std::string bytes;
  int delay;
  size_t pos = 0;
};

std::string isal_gzip(const std::string& tar) {
  std::string out;
  image::LayerCompressor c(image::Compression::kGzip, 2, [&](const char* p, size_t n) { out.append(p, n); });
  c.write(tar.data(), tar.size());
  c.finish();
  return out;
}

// Layer i waits (n - i) * step ms and is started in the order n-1 ... 0: the lowest layer is read last.
std::vector<LayerInput> slow_bottom(const std::vector<std::string>& blobs, int step = 60) {
  std::vector<LayerInput> out;
  for (size_t i = 0; i < blobs.size(); ++i) {
    int delay = static_cast<int>(blobs.size() - i) * step;
    // size hint: upper layers "bigger", so they are also started first
    out.push_back({"layer " + std::to_string(i),
                   [b = blobs[i], delay] { return std::make_unique<SlowReader>(b, delay); }, static_cast<int64_t>(i)});
  }
  return out;
}

const std::vector<std::vector<TarItem>> kStack = {
    {{"etc/", "", 'd'},
     {"etc/a", "a0"},
     {"etc/b", "b0"},
     {"opt/x/1", "1"},
     {"opt/x/2", "2"},
     {"big", std::string(5000, 'B')},
     {"usr/lib/libfoo.so.1", "elf"},
     {"usr/lib/libfoo.so", "libfoo.so.1", 'l'}},
    {{"etc/.wh.a", ""}, {"opt/x/.wh..wh..opq", ""}, {"opt/x/3", "3"}, {"usr/bin/hl", "big", 'h'}},
    {{"etc/a", "a2"}, {"opt/x", "now a file"}, {"usr/lib/.wh.libfoo.so.1", ""}},
    {{"etc/b", "b3"}, {".wh.usr", ""}, {"usr/share/doc", "d"}},
};

}  // namespace

TEST_CASE("add_layers: layers read out of order merge exactly as one by one") {
  auto keep = [](const std::string&, int64_t n) { return n < 100000; };
  ContentsTree serial(keep), parallel(keep);
  std::vector<std::string> blobs;
  for (size_t i = 0; i < kStack.size(); ++i) {
    blobs.push_back(i % 2 ? make_tar(kStack[i], "zstd") : isal_gzip(make_tar(kStack[i])));
    image::StringReader r(blobs.back());
    serial.add_layer(r, "layer");
  }
  auto stats = parallel.add_layers(slow_bottom(blobs), 4);
  CHECK(snapshot(parallel) == snapshot(serial));
  REQUIRE(stats.size() == 4);
  CHECK(stats[0].codec == "gzip");
  CHECK(stats[1].codec == "zstd");
  CHECK(stats[0].compressed == static_cast<int64_t>(blobs[0].size()));
  CHECK(stats[3].entries == 3);
  // What the stack means, spelled out:
  CHECK(parallel.find("/etc/a")->content->compare("a2") == 0);  // whited out in 1, re-added in 2
  CHECK(*parallel.find("/etc/b")->content == "b3");
  CHECK(parallel.find("/opt/x")->type == FsEntry::Type::kFile);  // a file replaced the dir
  CHECK(parallel.find("/opt/x/3") == nullptr);
  CHECK(parallel.find("/big")->content->size() == 5000);
  CHECK(parallel.find("/usr/bin/hl") == nullptr);  // removed with /usr by layer 3
  CHECK(parallel.find("/usr/lib/libfoo.so") == nullptr);
  CHECK(parallel.find("/usr/share/doc") != nullptr);  // layer 3's own entry survives its whiteout
}

TEST_CASE("add_layers: a later layer's whiteout removes an earlier layer's file though the later one is read first") {
  std::vector<std::string> blobs = {make_tar({{"app/model.bin", "weights"}, {"app/keep", "k"}}, "gzip"),
                                    make_tar({{"app/.wh.model.bin", ""}})};
  ContentsTree t;
  t.add_layers(slow_bottom(blobs, 150), 2);
  CHECK(t.find("/app/model.bin") == nullptr);
  CHECK(t.find("/app/keep") != nullptr);
  // ... and a lower layer's whiteout never removes an upper layer's file.
  ContentsTree u;
  u.add_layers(slow_bottom({make_tar({{"app/.wh.x", ""}}), make_tar({{"app/x", "upper"}})}, 150), 2);
  CHECK(u.find("/app/x") != nullptr);
}

TEST_CASE("add_layers: a hard link in an upper layer shares the kept bytes of a lower layer's file") {
  ContentsTree t([](const std::string&, int64_t) { return true; });
  t.add_layers(
      slow_bottom({make_tar({{"lib/a.so", std::string(4096, 'a')}}), make_tar({{"lib/b.so", "lib/a.so", 'h'}})}), 2);
  REQUIRE(t.find("/lib/b.so") != nullptr);
  CHECK(t.find("/lib/b.so")->content.get() == t.find("/lib/a.so")->content.get());
}

TEST_CASE("add_layers: entries and kept bytes are capped over all layers scanned at once") {
  ContentsLimits small;
  small.max_entries = 10;
  std::vector<std::string> blobs(4, make_tar({{"a", ""}, {"b", ""}, {"c", ""}}));
  ContentsTree t(nullptr, small);
  CHECK(error_of([&] { t.add_layers(slow_bottom(blobs, 0), 4); }).find("at most 10 tar entries") != std::string::npos);

  ContentsLimits kept;
  kept.max_kept_bytes = 1000;
  ContentsTree k([](const std::string&, int64_t) { return true; }, kept);
  std::vector<std::string> fat(3, make_tar({{"f", std::string(400, 'x')}}));
  CHECK(error_of([&] { k.add_layers(slow_bottom(fat, 0), 3); }).find("at most 1000 bytes of kept") !=
        std::string::npos);
}

namespace {
struct FailingReader : image::BlobReader {
  size_t read(char*, size_t) override { throw Error("registry went away (test)", true); }
};
}  // namespace

TEST_CASE("add_layers: a failing layer's exception comes back as it was; a hostile one is refused") {
  std::vector<LayerInput> layers =
      slow_bottom({make_tar({{"a", "1"}}), make_tar({{"b", "2"}}), make_tar({{"c", "3"}})});
  layers[1].open = [] { return std::make_unique<FailingReader>(); };
  ContentsTree t;
  try {
    t.add_layers(layers, 3);
    FAIL("expected the reader's error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "registry went away (test)");
    CHECK(e.retryable);
  }
  layers[1] = {"layer xz", [b = make_tar({{"b", "2"}}, "xz")] { return std::make_unique<image::StringReader>(b); }};
  ContentsTree u;
  std::string err = error_of([&] { u.add_layers(layers, 2); });
  CHECK_MESSAGE(err.find("layer xz: ") == 0, err);
  CHECK(err.find("uncompressed, gzip or zstd") != std::string::npos);
}

TEST_CASE("add_layers: a big file's bytes are skipped, the facts' small files are kept") {
  std::vector<TarItem> items = python_paddle_layer("3.11", "paddlepaddle", "3.2.0", "12.6", "9.5.1");
  items.push_back({"usr/local/lib/python3.11/dist-packages/paddle/libs/libphi.so", std::string(6 << 20, 'E')});
  ContentsTree t(keep_for_facts);
  auto stats = t.add_layers(slow_bottom({isal_gzip(make_tar(items))}, 0));
  const FsEntry* so = t.find("/usr/local/lib/python3.11/dist-packages/paddle/libs/libphi.so");
  REQUIRE(so != nullptr);
  CHECK(so->size == 6 << 20);
  CHECK(so->content == nullptr);
  CHECK(stats[0].tar > (6 << 20));
  ContentsFacts f = gather_facts(t);
  REQUIRE(f.paddles.size() == 1);
  CHECK(f.paddles[0].gpu);
  CHECK(f.paddles[0].compiled_cuda == "12.6");
}
