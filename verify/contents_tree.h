// The merged filesystem of an image, built by STREAMING its layers (lowest
// first) through libarchive: nothing is extracted to disk and the image is
// never run. Only metadata is kept for every path, plus the bytes of the few
// small files a `KeepContent` predicate selects (METADATA, pyvenv.cfg, ...).
//
// Layer semantics (OCI image-spec layer.md)
//   - `DIR/.wh.NAME` removes DIR/NAME (and everything under it) from LOWER layers;
//   - `DIR/.wh..wh..opq` removes everything under DIR from lower layers;
//   - whiteouts apply before the layer's own entries, whatever their tar order;
//   - a hard link takes the metadata (and kept bytes) of its target.
// Paths are absolute and normalised ("/usr/lib/x"), no trailing slash.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "image/image.h"

namespace imgtool::verify {

struct FsEntry {
  enum class Type { kFile, kDir, kSymlink, kOther };
  Type type = Type::kFile;
  std::string link;                    // symlink target as written
  int64_t size = 0;
  std::optional<std::string> content;  // kept bytes (files the predicate selected)
};

class ContentsTree {
 public:
  using KeepContent = std::function<bool(const std::string& path, int64_t size)>;
  explicit ContentsTree(KeepContent keep = nullptr) : keep_(std::move(keep)) {}

  // Applies one layer (tar, tar+gzip or tar+zstd; detected from the bytes).
  // Reads `layer` to its end so a verifying reader checks the digest.
  // Throws imgtool::Error naming `where` if the stream is not a tar.
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
  std::map<std::string, FsEntry> entries_;
  KeepContent keep_;
};

}  // namespace imgtool::verify
