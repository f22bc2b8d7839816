// The copy engine's contract with the in-memory source and destination
// (image/memory.h), without a registry: blobs first, manifest last; the tag
// moves only with the manifest; a failure anywhere leaves the tag where it was.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/error.h"
#include "image/copy.h"
#include "image/memory.h"

using namespace imgtool;
using namespace imgtool::image;

namespace {

struct Stores {
  std::shared_ptr<MemoryStore> from = std::make_shared<MemoryStore>();
  std::shared_ptr<MemoryStore> to = std::make_shared<MemoryStore>();
  Manifest image = random_image(*from, 3, 64 * 1024, "new");
  Manifest old = random_image(*to, 1, 1024, "t");  // what the destination tag names before
  size_t writes_before = to->log().size();
  std::vector<std::string> copy_log() const {
    auto all = to->log();
    return {all.begin() + static_cast<long>(writes_before), all.end()};
  }
};

}  // namespace

TEST_CASE("copy: every blob is stored before the manifest, and the tag moves only with the manifest") {
  Stores s;
  MemorySource src(s.from, "new");
  MemoryDestination dst(s.to);
  auto res = copy_image(src, dst, "t", {.jobs = 3});
  CHECK(res.digest == s.image.digest());
  CHECK(res.blobs == 4);
  auto log = s.copy_log();
  REQUIRE(log.size() == 5);
  for (size_t i = 0; i + 1 < log.size(); ++i) CHECK(log[i].rfind("blob ", 0) == 0);
  CHECK(log.back() == "manifest " + s.image.digest() + " tag t");
  CHECK(s.to->tag("t") == s.image.digest());
}

TEST_CASE("copy: by digest only (empty tag) leaves every tag alone") {
  Stores s;
  MemorySource src(s.from, "new");
  MemoryDestination dst(s.to);
  copy_image(src, dst, "");
  CHECK(s.to->tag("t") == s.old.digest());
  CHECK(s.to->manifest(s.image.digest()).has_value());
}

TEST_CASE("copy: a blob that cannot be stored stops the copy; no manifest is written, the tag stays") {
  Stores s;
  MemorySource src(s.from, "new");
  MemoryDestination dst(s.to);
  dst.fail_blob(s.image.layers()[1].digest);
  CHECK_THROWS_AS(copy_image(src, dst, "t", {.jobs = 2}), Error);
  CHECK(s.to->tag("t") == s.old.digest());
  auto log = s.copy_log();
  CHECK(std::none_of(log.begin(), log.end(), [](auto& l) { return l.rfind("manifest ", 0) == 0; }));
}

TEST_CASE("copy: a retryable blob failure is retried, then given up; the tag stays") {
  Stores s;
  MemorySource src(s.from, "new");
  MemoryDestination dst(s.to);
  dst.fail_blob(s.image.layers()[0].digest, /*retryable=*/true);
  CHECK_THROWS_AS(copy_image(src, dst, "t", {.attempts = 2}), Error);
  CHECK(s.to->tag("t") == s.old.digest());
}

TEST_CASE("copy: a manifest write that fails leaves the tag where it was") {
  Stores s;
  MemorySource src(s.from, "new");
  MemoryDestination dst(s.to);
  dst.fail_manifest();
  CHECK_THROWS_AS(copy_image(src, dst, "t"), Error);
  CHECK(s.to->tag("t") == s.old.digest());
}

TEST_CASE("copy: a source blob whose bytes do not match its digest is refused; the tag stays") {
  Stores s;
  s.from->put_blob(s.image.layers()[2].digest, "not the layer");
  MemorySource src(s.from, "new");
  MemoryDestination dst(s.to);
  CHECK_THROWS_AS(copy_image(src, dst, "t"), Error);
  CHECK(s.to->tag("t") == s.old.digest());
  CHECK_FALSE(s.to->has_blob(s.image.layers()[2].digest));
}

TEST_CASE("copy: blobs the destination has are skipped; a re-run completes an interrupted copy") {
  Stores s;
  MemorySource src(s.from, "new");
  MemoryDestination dst(s.to);
  dst.fail_manifest();
  CHECK_THROWS_AS(copy_image(src, dst, "t"), Error);  // interrupted after the blobs
  MemoryDestination again(s.to);
  auto res = copy_image(src, again, "t");
  CHECK(res.blobs_skipped == 4);
  CHECK(res.bytes_copied == 0);
  CHECK(s.to->tag("t") == s.image.digest());
}
