// LayerCache: a cached compressed layer is re-hashed before it is used; a
// swapped or corrupted blob is dropped (and recomputed by the caller).
#include "image/layer_cache.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "core/fs.h"
#include "core/hash.h"

using namespace imgtool;
using namespace imgtool::image;

namespace {

// A fresh cache at `root` holding one committed blob, for the diff_id of "the uncompressed tar".
CompressedLayer commit_one(const fs::path& root) {
  fs::remove_all(root);
  std::string blob = "compressed layer bytes";
  CompressedLayer l{sha256_digest("the uncompressed tar"), sha256_digest(blob), static_cast<int64_t>(blob.size()), 100};
  LayerCache c(root, Compression::kGzip);
  auto tmp = c.new_blob();
  tmp->write(blob);
  c.commit(*tmp, l);
  REQUIRE(c.find(l.diff_id));
  return l;
}

}  // namespace

TEST_CASE("a cached layer blob whose bytes changed is not used") {
  fs::path root = fs::temp_directory_path() / ("imgtool-layer-cache-" + std::to_string(::getpid()));
  CompressedLayer l = commit_one(root);
  const std::string& diff_id = l.diff_id;
  CHECK(LayerCache(root, Compression::kGzip).find(diff_id)->digest == l.digest);  // intact: found, re-hashed

  // Same size, other bytes: a size check alone would hand these to a push.
  write_file_atomic(LayerCache(root, Compression::kGzip).blob_path(l.digest), "COMPRESSED LAYER BYTES");
  LayerCache fresh(root, Compression::kGzip);
  CHECK_FALSE(fresh.find(diff_id).has_value());
  CHECK_FALSE(fs::exists(fresh.blob_path(l.digest)));  // dropped, so the next run recomputes it
  fs::remove_all(root);
}

TEST_CASE(
    "find_unverified() checks the size only; verify() re-hashes before the bytes are read, and drops a changed blob") {
  fs::path root = fs::temp_directory_path() / ("imgtool-layer-cache-v-" + std::to_string(::getpid()));
  fs::remove_all(root);
  std::string blob = "compressed layer bytes", diff_id = sha256_digest("the uncompressed tar");
  CompressedLayer l{diff_id, sha256_digest(blob), static_cast<int64_t>(blob.size()), 100};
  {
    LayerCache c(root, Compression::kGzip);
    auto tmp = c.new_blob();
    tmp->write(blob);
    std::string placed;
    c.commit(*tmp, l, [&](const Descriptor& d) { placed = d.digest; });
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

TEST_CASE("new_blob: a fresh file under tmp/ at an unguessable name; dropped, it is gone; committed, a 0644 blob") {
  fs::path root = fs::temp_directory_path() / ("imgtool-layer-cache-n-" + std::to_string(::getpid()));
  fs::remove_all(root);
  LayerCache c(root, Compression::kGzip);
  fs::path dropped;
  {
    auto a = c.new_blob(), b = c.new_blob();
    CHECK(a->temp_path() != b->temp_path());
    CHECK(a->temp_path().parent_path() == root / "tmp");
    CHECK(fs::is_regular_file(fs::symlink_status(a->temp_path())));
    dropped = a->temp_path();
  }
  CHECK_FALSE(fs::exists(dropped));
  std::string blob = "bytes";
  CompressedLayer l{sha256_digest("tar"), sha256_digest(blob), static_cast<int64_t>(blob.size()), 3};
  auto f = c.new_blob();
  f->write(blob);
  c.commit(*f, l);
  CHECK(read_file(c.blob_path(l.digest)) == blob);
  CHECK((fs::status(c.blob_path(l.digest)).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read));
  CHECK(fs::is_empty(root / "tmp"));
  fs::remove_all(root);
}

TEST_CASE("trim: the least recently used blobs go first, never one used within the grace period; find() is a use") {
  PrivateTempDir dir;
  LayerCache c(dir.path(), Compression::kGzip);
  const auto now = fs::file_time_type::clock::now();
  std::vector<CompressedLayer> layers;
  for (int i = 0; i < 4; ++i) {
    std::string blob(100, static_cast<char>('a' + i));
    CompressedLayer l{sha256_digest("tar " + std::to_string(i)), sha256_digest(blob), 100, 1000};
    auto tmp = c.new_blob();
    tmp->write(blob);
    c.commit(*tmp, l);
    fs::last_write_time(c.blob_path(l.digest), now - std::chrono::hours(4 - i));  // blob 0 is the oldest
    layers.push_back(l);
  }
  // A find() is a use: blob 0 becomes the most recent.
  REQUIRE(c.find_unverified(layers[0].diff_id));
  CHECK(fs::last_write_time(c.blob_path(layers[0].digest)) > now - std::chrono::minutes(1));
  CHECK(c.trim(0).blobs == 0);  // 0 = no limit
  CHECK(c.trim(400).blobs == 0);
  auto t = c.trim(250);  // 400 bytes: two go, the least recently used (1, then 2)
  CHECK(t.blobs == 2);
  CHECK(t.bytes == 200);
  CHECK(t.kept == 200);
  CHECK_FALSE(fs::exists(c.blob_path(layers[1].digest)));
  CHECK_FALSE(fs::exists(c.blob_path(layers[2].digest)));
  CHECK_FALSE(c.find_unverified(layers[1].diff_id));  // its map entry finds nothing: compressed again
  CHECK(fs::exists(c.blob_path(layers[3].digest)));   // (exists(): no use recorded)
  // Over the limit, but blob 0 was used a moment ago: kept (another process may be reading it).
  auto t2 = c.trim(1);
  CHECK(t2.blobs == 1);  // blob 3 (1 h old) goes
  CHECK(fs::exists(c.blob_path(layers[0].digest)));
  CHECK(t2.kept == 100);
}

TEST_CASE("trim_limit: IMGTOOL_LAYER_CACHE_MAX_GB in GiB, 8 by default; anything else is refused") {
  ::unsetenv("IMGTOOL_LAYER_CACHE_MAX_GB");
  CHECK(LayerCache::trim_limit() == 8ull << 30);
  ::setenv("IMGTOOL_LAYER_CACHE_MAX_GB", "0.5", 1);
  CHECK(LayerCache::trim_limit() == 512ull << 20);
  ::setenv("IMGTOOL_LAYER_CACHE_MAX_GB", "8G", 1);
  CHECK_THROWS_WITH(LayerCache::trim_limit(),
                    "IMGTOOL_LAYER_CACHE_MAX_GB: expected a number of GiB (0 = no limit), found '8G'");
  ::unsetenv("IMGTOOL_LAYER_CACHE_MAX_GB");
}

TEST_CASE("an entry another encoder made (an older imgtool, another zlib) is not served: compressed again, replaced") {
  fs::path root = fs::temp_directory_path() / ("imgtool-layer-cache-enc-" + std::to_string(::getpid()));
  CompressedLayer l = commit_one(root);
  const std::string& diff_id = l.diff_id;
  LayerCache c(root, Compression::kGzip);
  fs::path entry = root / "map" / diff_id.substr(7);
  auto j = nlohmann::json::parse(read_file(entry));
  CHECK(j["encoder"] == encoder_id(Compression::kGzip));
  REQUIRE(c.find(diff_id));
  for (const nlohmann::json& other : {nlohmann::json{{"digest", l.digest}, {"size", l.size}},  // before encoders
                                      nlohmann::json{{"digest", l.digest}, {"size", l.size}, {"encoder", "igzip x"}}}) {
    write_file_atomic(entry, other.dump());
    CHECK_FALSE(c.find(diff_id).has_value());
    CHECK_FALSE(c.find_unverified(diff_id).has_value());
  }
  // zstd's entries name zstd; gzip's the zlib file the loader took and the revision.
  CHECK(encoder_id(Compression::kZstd).rfind("zstd ", 0) == 0);
  CHECK(encoder_id(Compression::kGzip).rfind("zlib libz.so.1.", 0) == 0);
  CHECK(encoder_id(Compression::kGzip).find("revision ") != std::string::npos);
  fs::remove_all(root);
}
