// A local cache of compressed daemon layers, so an unchanged image is never
// compressed twice. Layout under ROOT (default cache_dir()/layers/<algo>):
//   blobs/<hex>       compressed layer, named by its digest
//   map/<diffid-hex>  {"digest","size","encoder"}: diff_id -> compressed blob, found only by
//                     the encoder that made it (encoder_id: an older imgtool's blob is not served)
//   saved/<v1-id>     diff_id of a `docker save` layer folder (skip re-hashing)
//   configs/<hex>     image config bytes, by digest (= the daemon's image ID)
// Entries appear atomically (written beside, then renamed). Concurrent writers
// of the same entry write identical bytes, so the last rename wins harmlessly.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "core/fs.h"
#include "image/compress.h"
#include "image/image.h"

namespace imgtool::image {

class LayerCache {
 public:
  LayerCache(std::filesystem::path root, Compression c);
  const std::filesystem::path& root() const { return root_; }
  Compression compression() const { return c_; }
  // cache_dir()/layers/<algo>: the cache every imgtool command shares unless told otherwise.
  static std::filesystem::path default_root(Compression c);

  // The compressed blob for diff_id, if present: size checked and, once per
  // process, the bytes re-hashed (anyone who could write the cache could
  // otherwise swap a layer); a mismatching entry is removed and nullopt returned.
  std::optional<Descriptor> find(const std::string& diff_id) const;
  // find() without the re-hash (size checked only), for a caller that calls
  // verify() before it reads the bytes: an unchanged re-push whose registry
  // already has every blob then reads none of them.
  std::optional<Descriptor> find_unverified(const std::string& diff_id) const;
  // Re-hashes the blob once per process; a mismatching blob is removed (its
  // map entry then finds nothing) and false returned.
  bool verify(const std::string& digest) const;
  std::filesystem::path blob_path(const std::string& digest) const;
  // A fresh temporary file inside the cache's tmp/ (same filesystem as blobs/), made by
  // mkstemp: created O_EXCL at an unguessable name, so nothing planted there is written
  // through. Dropped without commit(), it is removed.
  std::unique_ptr<AtomicFile> new_blob() const;
  // Moves a finished temporary file into place (fsynced, then renamed) and records diff_id -> blob.
  // placed(d), if given, runs once the blob is in place (blob_path() serves
  // it) and before the map entry is written (an fsync'd file: on ext4 that can
  // wait for the blob's own data to reach the disk), so a stream can end early.
  Descriptor commit(AtomicFile& blob, const CompressedLayer& layer,
                    const std::function<void(const Descriptor&)>& placed = nullptr);

  std::optional<std::string> saved_diff_id(const std::string& v1_id) const;
  void remember_saved(const std::string& v1_id, const std::string& diff_id);

  std::optional<std::string> config(const std::string& digest) const;  // re-hashed
  void put_config(const std::string& bytes);

  // Keeps the cache's blobs within `max_bytes`: the least recently used go first (a blob's mtime is
  // its last use: commit, and every find() touches it), but never one used within `grace` (another
  // process may be about to read it; its map entry then finds nothing and the layer is compressed
  // again). Returns the bytes removed. DaemonSource trims to trim_limit() as it opens the cache.
  struct Trimmed {
    size_t blobs = 0;
    uint64_t bytes = 0, kept = 0;  // removed; left
  };
  // dry_run: removes nothing, reports what would go.
  Trimmed trim(uint64_t max_bytes, std::chrono::seconds grace = std::chrono::minutes(15), bool dry_run = false) const;
  // IMGTOOL_LAYER_CACHE_MAX_GB (a number of GiB; 0 = no limit), default 8 GiB.
  static uint64_t trim_limit();

 private:
  bool verified(const std::string& digest) const;
  std::filesystem::path root_;
  Compression c_;
  mutable std::mutex mu_;
  mutable std::set<std::string> verified_;  // blob digests re-hashed by this process
};

}  // namespace imgtool::image
