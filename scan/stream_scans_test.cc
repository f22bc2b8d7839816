// scan::StreamScans: layers scanned from a source's uncompressed stream as it is made (the docker
// save stream's order, each named by its diff_id only at its end) and merged later in layer order
// mean exactly what the same layers read from their blobs mean; a stream whose scan fails is not
// found (the caller reads that layer again) and its producer is let go; caps hold over all layers.
#include "scan/stream_scans.h"

#include <doctest/doctest.h>

#include <thread>

#include "core/error.h"
#include "core/hash.h"
#include "image/blob.h"
#include "scan/testing/layers.h"
#include "tests/error_of.h"

using namespace imgtool;
using namespace imgtool::scan;
using namespace imgtool::scan::testing;

namespace {

const std::vector<std::vector<TarItem>> kStack = {
    {{"etc/", "", 'd'}, {"etc/a", "a0"}, {"etc/b", "b0"}, {"opt/x/1", "1"}, {"usr/lib/libfoo.so.1", "elf"}},
    {{"etc/.wh.a", ""}, {"opt/x/.wh..wh..opq", ""}, {"opt/x/3", "3"}, {"usr/bin/hl", "usr/lib/libfoo.so.1", 'h'}},
    {{"etc/b", "b2"}, {"usr/lib/libfoo.so", "libfoo.so.1", 'l'}},
};

ContentsTree keep_all(ContentsLimits limits = {}) {
  return ContentsTree([](const std::string&, int64_t) { return true; }, limits);
}

// What a source does: hands the stream out, pushes the tar in small pieces from a thread of its
// own, then names it by its diff_id. Returns whether every push was taken (false: abandoned).
bool produce(const std::function<void(std::shared_ptr<image::StreamingBlob>)>& cb, const std::string& tar) {
  auto g = std::make_shared<image::GrowingBlob>(image::media::kOciLayerTar, 1024);
  cb(g);
  bool taken = true;
  std::thread t([&] {
    for (size_t at = 0; at < tar.size() && taken; at += 700)
      taken = g->push(tar.data() + at, std::min<size_t>(700, tar.size() - at));
    g->end({image::media::kOciLayerTar, sha256_digest(tar), static_cast<int64_t>(tar.size())});
  });
  t.join();
  return taken;
}

std::vector<LayerInput> inputs(const std::vector<std::string>& tars, const StreamScans* scans) {
  std::vector<LayerInput> out;
  for (size_t i = 0; i < tars.size(); ++i)
    out.push_back({"layer " + std::to_string(i), [b = tars[i]] { return std::make_unique<image::StringReader>(b); },
                   static_cast<int64_t>(tars[i].size()), scans ? scans->find(sha256_digest(tars[i])) : nullptr});
  return out;
}

}  // namespace

TEST_CASE("stream scans: layers streamed out of order merge exactly as the blobs read in order") {
  std::vector<std::string> tars;
  for (const auto& items : kStack) tars.push_back(make_tar(items));
  ContentsTree from_blobs = keep_all();
  from_blobs.add_layers(inputs(tars, nullptr), 1);

  ContentsTree tree = keep_all();
  StreamScans scans(tree, "test");
  for (size_t i : {2, 0, 1}) CHECK(produce(scans.callback(), tars[i]));  // the save's order, not the image's
  scans.wait();
  CHECK(scans.scanned() == 3);
  std::vector<LayerInput> layers = inputs(tars, &scans);
  for (auto& l : layers) {
    REQUIRE(l.scanned != nullptr);
    l.open = []() -> std::unique_ptr<image::BlobReader> { throw Error("read again (test)"); };  // must not be
  }
  tree.add_layers(layers);
  CHECK(snapshot(tree) == snapshot(from_blobs));
  CHECK(tree.find("/etc/a") == nullptr);               // the whiteout of a lower layer's file
  CHECK(tree.find("/opt/x/1") == nullptr);             // the opaque folder
  CHECK(*tree.find("/usr/bin/hl")->content == "elf");  // the hard link's target's bytes
  CHECK(*tree.resolve("/usr/lib/libfoo.so") == "/usr/lib/libfoo.so.1");
}

TEST_CASE("stream scans: a stream that is no tar is not found, its producer let go, the layer read again") {
  ContentsTree tree = keep_all();
  StreamScans scans(tree, "test");
  std::string junk(64 * 1024, 'x');  // no tar header: the scan fails and abandons the stream
  CHECK_FALSE(produce(scans.callback(), junk));
  std::string good = make_tar({{"a", "1"}});
  CHECK(produce(scans.callback(), good));
  scans.wait();
  CHECK(scans.find(sha256_digest(junk)) == nullptr);
  CHECK(scans.find(sha256_digest(good)) != nullptr);
  // Read again from its blob, the layer fails with its own name, as without the stream.
  CHECK(imgtool::testing::error_of([&] {
          tree.add_layers(inputs({good, junk}, &scans));
        }).find("layer 1") != std::string::npos);
}

TEST_CASE("stream scans: a stream its producer fails is not found") {
  ContentsTree tree = keep_all();
  StreamScans scans(tree, "test");
  auto g = std::make_shared<image::GrowingBlob>(image::media::kOciLayerTar, 1024);
  scans.callback()(g);
  std::string tar = make_tar({{"a", "1"}});
  g->push(tar.data(), 100);
  g->fail(std::make_exception_ptr(Error("docker save stream broke (test)")));
  scans.wait();
  CHECK(scans.scanned() == 0);
}

TEST_CASE("stream scans: entries and kept bytes are capped over all layers once merged") {
  ContentsLimits small;
  small.max_entries = 5;
  ContentsTree tree = keep_all(small);
  StreamScans scans(tree, "test");
  std::vector<std::string> tars(2, make_tar({{"a", ""}, {"b", ""}, {"c", ""}}));
  tars[1] = make_tar({{"d", ""}, {"e", ""}, {"f", ""}});
  for (auto& t : tars) CHECK(produce(scans.callback(), t));  // each alone is under the cap
  scans.wait();
  CHECK(scans.scanned() == 2);
  CHECK(imgtool::testing::error_of([&] { tree.add_layers(inputs(tars, &scans)); }).find("at most 5 tar entries") !=
        std::string::npos);

  ContentsLimits kept;
  kept.max_kept_bytes = 1000;
  ContentsTree k = keep_all(kept);
  StreamScans kscans(k, "test");
  std::vector<std::string> fat = {make_tar({{"f", std::string(600, 'x')}}), make_tar({{"g", std::string(600, 'y')}})};
  for (auto& t : fat) CHECK(produce(kscans.callback(), t));
  kscans.wait();
  CHECK(imgtool::testing::error_of([&] { k.add_layers(inputs(fat, &kscans)); }).find("at most 1000 bytes of kept") !=
        std::string::npos);
}
