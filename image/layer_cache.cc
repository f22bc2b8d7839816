#include "image/layer_cache.h"

#include <algorithm>
#include <cstdlib>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/json_file.h"
#include "core/paths.h"

namespace imgtool::image {
namespace {

std::string hex_of(const std::string& digest) { return digest.substr(digest.find(':') + 1); }

std::optional<std::string> read_opt(const std::filesystem::path& p) {
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) return std::nullopt;
  return read_file(p);
}

}  // namespace

LayerCache::LayerCache(std::filesystem::path root, Compression c) : root_(std::move(root)), c_(c) {
  for (const char* sub : {"blobs", "map", "saved", "configs", "tmp"}) std::filesystem::create_directories(root_ / sub);
}

std::filesystem::path LayerCache::default_root(Compression c) {
  return std::filesystem::path(cache_dir()) / "layers" / compression_name(c);
}

std::filesystem::path LayerCache::blob_path(const std::string& digest) const {
  return root_ / "blobs" / hex_of(digest);
}

uint64_t LayerCache::trim_limit() {
  const char* v = std::getenv("IMGTOOL_LAYER_CACHE_MAX_GB");
  double gb = 8;
  if (v && *v) {
    char* end = nullptr;
    gb = std::strtod(v, &end);
    if (*end || gb < 0)
      throw InputError("IMGTOOL_LAYER_CACHE_MAX_GB: expected a number of GiB (0 = no limit), found '" + std::string(v) +
                       "'");
  }
  return static_cast<uint64_t>(gb * (1ull << 30));
}

LayerCache::Trimmed LayerCache::trim(uint64_t max_bytes, std::chrono::seconds grace, bool dry_run) const {
  namespace fs = std::filesystem;
  struct Blob {
    fs::file_time_type used;
    uint64_t size;
    fs::path path;
  };
  std::vector<Blob> blobs;
  Trimmed t;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root_ / "blobs", ec)) {
    std::error_code e1, e2;
    auto size = e.file_size(e1);
    auto used = e.last_write_time(e2);
    if (e1 || e2 || !e.is_regular_file()) continue;
    blobs.push_back({used, size, e.path()});
    t.kept += size;
  }
  if (max_bytes == 0 || t.kept <= max_bytes) return t;
  std::sort(blobs.begin(), blobs.end(), [](const Blob& a, const Blob& b) { return a.used < b.used; });
  const auto recent = fs::file_time_type::clock::now() - grace;
  for (const auto& b : blobs) {
    if (t.kept <= max_bytes || b.used > recent) break;
    if (!dry_run && (!fs::remove(b.path, ec) || ec)) continue;
    t.kept -= b.size, t.bytes += b.size, ++t.blobs;
  }
  return t;
}

std::optional<Descriptor> LayerCache::find_unverified(const std::string& diff_id) const {
  auto entry = read_opt(root_ / "map" / hex_of(diff_id));
  if (!entry) return std::nullopt;
  auto j = parse_json_or_discarded(*entry);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  Descriptor d{oci_layer_media_type(c_), j.value("digest", ""), j.value("size", int64_t{0})};
  if (!is_sha256_digest(d.digest)) return std::nullopt;
  // Another encoder's blob (an older imgtool, another ISA-L) is a valid layer and other bytes: served,
  // it would make a publish's digest depend on this cache's history. Compressed again, it is replaced.
  if (j.value("encoder", "") != encoder_id(c_)) return std::nullopt;
  std::error_code ec;
  auto size = std::filesystem::file_size(blob_path(d.digest), ec);
  if (ec || static_cast<int64_t>(size) != d.size) return std::nullopt;
  std::filesystem::last_write_time(blob_path(d.digest), std::filesystem::file_time_type::clock::now(), ec);  // used
  return d;
}

std::optional<Descriptor> LayerCache::find(const std::string& diff_id) const {
  auto d = find_unverified(diff_id);
  if (!d) return std::nullopt;
  if (!verify(d->digest)) {
    std::error_code ec;
    std::filesystem::remove(root_ / "map" / hex_of(diff_id), ec);
    return std::nullopt;
  }
  return d;
}

bool LayerCache::verify(const std::string& digest) const {
  if (verified(digest)) return true;
  std::error_code ec;
  std::filesystem::remove(blob_path(digest), ec);
  return false;
}

bool LayerCache::verified(const std::string& digest) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (verified_.count(digest)) return true;
  }
  if ("sha256:" + sha256_file_hex(blob_path(digest).string()) != digest) return false;
  std::lock_guard<std::mutex> lock(mu_);
  verified_.insert(digest);
  return true;
}

std::unique_ptr<AtomicFile> LayerCache::new_blob() const {
  return std::make_unique<AtomicFile>(root_ / "tmp" / "blob", 0644);
}

Descriptor LayerCache::commit(AtomicFile& blob, const CompressedLayer& l,
                              const std::function<void(const Descriptor&)>& placed) {
  // The bytes reach the disk before the name does (AtomicFile: fsync, rename, folder fsync):
  // a crash leaves no renamed-but-empty blob.
  blob.commit(blob_path(l.digest));
  {
    std::lock_guard<std::mutex> lock(mu_);
    verified_.insert(l.digest);  // hashed in the same pass that wrote it
  }
  Descriptor d{oci_layer_media_type(c_), l.digest, l.size};
  if (placed) placed(d);
  nlohmann::json j{{"digest", l.digest}, {"size", l.size}, {"encoder", encoder_id(c_)}};
  write_file_atomic(root_ / "map" / hex_of(l.diff_id), j.dump());
  return d;
}

std::optional<std::string> LayerCache::saved_diff_id(const std::string& v1_id) const {
  return read_opt(root_ / "saved" / v1_id);
}

void LayerCache::remember_saved(const std::string& v1_id, const std::string& diff_id) {
  write_file_atomic(root_ / "saved" / v1_id, diff_id);
}

std::optional<std::string> LayerCache::config(const std::string& digest) const {
  auto bytes = read_opt(root_ / "configs" / hex_of(digest));
  if (!bytes || sha256_digest(*bytes) != digest) return std::nullopt;
  return bytes;
}

void LayerCache::put_config(const std::string& bytes) {
  write_file_atomic(root_ / "configs" / sha256_hex(bytes), bytes);
}

}  // namespace imgtool::image
