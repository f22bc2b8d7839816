// LayerCache: a cached compressed layer is re-hashed before it is used; a
// swapped or corrupted blob is dropped (and recomputed by the caller).
#include <doctest/doctest.h>
#include <unistd.h>

#include "core/fs.h"
#include "core/hash.h"
#include "image/layer_cache.h"

using namespace imgtool;
using namespace imgtool::image;

TEST_CASE("a cached layer blob whose bytes changed is not used") {
  fs::path root = fs::temp_directory_path() / ("imgtool-layer-cache-" + std::to_string(::getpid()));
  fs::remove_all(root);
  std::string blob = "compressed layer bytes", diff_id = sha256_digest("the uncompressed tar");
  CompressedLayer l{diff_id, sha256_digest(blob), static_cast<int64_t>(blob.size()), 100};
  {
    LayerCache c(root, Compression::kGzip);
    auto tmp = c.temp_path();
    write_file_atomic(tmp, blob);
    c.commit(tmp, l);
    REQUIRE(c.find(diff_id));
  }
  CHECK(LayerCache(root, Compression::kGzip).find(diff_id)->digest == l.digest);  // intact: found, re-hashed

  // Same size, other bytes: a size check alone would hand these to a push.
  write_file_atomic(LayerCache(root, Compression::kGzip).blob_path(l.digest), "COMPRESSED LAYER BYTES");
  LayerCache fresh(root, Compression::kGzip);
  CHECK_FALSE(fresh.find(diff_id).has_value());
  CHECK_FALSE(fs::exists(fresh.blob_path(l.digest)));  // dropped, so the next run recomputes it
  fs::remove_all(root);
}

TEST_CASE("find_unverified() checks the size only; verify() re-hashes before the bytes are read, and drops a changed blob") {
  fs::path root = fs::temp_directory_path() / ("imgtool-layer-cache-v-" + std::to_string(::getpid()));
  fs::remove_all(root);
  std::string blob = "compressed layer bytes", diff_id = sha256_digest("the uncompressed tar");
  CompressedLayer l{diff_id, sha256_digest(blob), static_cast<int64_t>(blob.size()), 100};
  {
    LayerCache c(root, Compression::kGzip);
    auto tmp = c.temp_path();
    write_file_atomic(tmp, blob);
    std::string placed;
    c.commit(tmp, l, [&](const Descriptor& d) { placed = d.digest; });
    CHECK(placed == l.digest);
  }
  write_file_atomic(LayerCache(root, Compression::kGzip).blob_path(l.digest), "COMPRESSED LAYER BYTES");
  LayerCache fresh(root, Compression::kGzip);
  REQUIRE(fresh.find_unverified(diff_id));  // same size: not read yet
  CHECK_FALSE(fresh.verify(l.digest));      // read: the change is found
  CHECK_FALSE(fs::exists(fresh.blob_path(l.digest)));
  CHECK_FALSE(fresh.find_unverified(diff_id));
  fs::remove_all(root);
}
