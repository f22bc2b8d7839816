// The merged filesystem of an image, built by STREAMING its layers (lowest
// first) through libarchive: nothing is extracted to disk and the image is
// never run. Only metadata is kept for every path, plus the bytes of the few
// small files a `KeepContent` predicate selects (METADATA, pyvenv.cfg, ...).
//
// Layer semantics (OCI image-spec layer.md)
//   - `DIR/.wh.NAME` removes DIR/NAME (and everything under it) from LOWER layers;
//   - `DIR/.wh..wh..opq` removes everything under DIR from lower layers;
//   - whiteouts apply before the layer's own entries, whatever their tar order;
//   - a hard link takes the metadata of its target and SHARES its kept bytes.
// Paths are absolute and normalised ("/usr/lib/x"), no trailing slash.
//
// Hostile layers (the scan runs before anything vouches for the bytes beyond
// the signature): only gzip, zstd and uncompressed tar are read (libarchive's
// built-in filters; never an external decompressor program); entries, path
// length and kept bytes are capped (ContentsLimits; past a cap the layer is an
// Error naming the cap); an exception from the BlobReader never unwinds
// through libarchive's C frames (caught in the callback, rethrown after).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "image/image.h"

struct archive;        // libarchive
struct archive_entry;

namespace imgtool::verify {

struct FsEntry {
  enum class Type { kFile, kDir, kSymlink, kOther };
  Type type = Type::kFile;
  std::string link;                    // symlink target as written
  int64_t size = 0;
  std::shared_ptr<const std::string> content;  // kept bytes (files the predicate selected); shared by hard links
};

struct ContentsLimits {
  size_t max_entries = 4'000'000;       // tar entries over all layers
  size_t max_path = 4096;               // bytes in one entry's path or link target (PATH_MAX)
  int64_t max_kept_bytes = 64ll << 20;  // kept file bytes over all layers
};

class ContentsTree {
 public:
  using KeepContent = std::function<bool(const std::string& path, int64_t size)>;
  explicit ContentsTree(KeepContent keep = nullptr, ContentsLimits limits = {})
      : keep_(std::move(keep)), limits_(limits) {}

  // Applies one layer (tar, tar+gzip or tar+zstd; detected from the bytes).
  // Reads `layer` to its end so a verifying reader checks the digest.
  // Throws imgtool::Error naming `where` if the stream is not such a tar or
  // passes a limit; the reader's own exception is rethrown as it was.
  void add_layer(image::BlobReader& layer, const std::string& where);

  const std::map<std::string, FsEntry>& entries() const { return entries_; }
  const FsEntry* find(const std::string& path) const;  // no symlink following

  // Follows symlinks in every component (absolute and relative targets, at
  // most 40 hops). Returns the final path if it exists, nullopt if dangling
  // or looping.
  std::optional<std::string> resolve(const std::string& path) const;

  static std::string normalize(const std::string& tar_path);

 private:
  bool has_children(const std::string& dir) const;  // implicit directories
  void erase_under(const std::string& dir, bool include_self);
  struct RawEntry;
  RawEntry read_entry(::archive* a, ::archive_entry* e, const std::string& where);
  std::map<std::string, FsEntry> entries_;
  KeepContent keep_;
  ContentsLimits limits_;
  size_t seen_entries_ = 0;
  int64_t kept_bytes_ = 0;
};

}  // namespace imgtool::verify
