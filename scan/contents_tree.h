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
// Speed (issue 9): a layer is inflated by image/inflate.h (ISA-L for gzip,
// libzstd for zstd) straight into libarchive's read buffer; libarchive sees
// plain tar and skips the data of every entry nothing keeps
// (archive_read_data_skip); add_layers() scans up to one layer per core at once
// and merges them strictly in layer order.
//
// Hostile layers (the scan runs before anything vouches for the bytes beyond
// the signature): only gzip, zstd and uncompressed tar are read (detected from
// the magic bytes; libarchive reads tar with no filter of its own, so never an
// external decompressor program); entries, path length and kept bytes are
// capped over all layers, also when they are scanned in parallel
// (ContentsLimits; past a cap the layer is an Error naming the cap); an
// exception from the BlobReader never unwinds through libarchive's C frames
// (caught in the callback, rethrown after).
#pragma once
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "image/image.h"
#include "scan/dlopen_names.h"
#include "scan/elf_dynamic.h"
#include "scan/gpu_code.h"

struct archive;  // libarchive
struct archive_entry;

namespace imgtool::scan {

struct FsEntry {
  enum class Type { kFile, kDir, kSymlink, kOther };
  Type type = Type::kFile;
  std::string link;  // symlink target as written
  int64_t size = 0;
  std::shared_ptr<const std::string> content;  // kept bytes (files the predicate selected); shared by hard links
  // The GPU code in the file's fat binaries, for the files the examine predicate selected (read
  // as the layer streams by: scan/gpu_code.h); shared by hard links.
  std::shared_ptr<const GpuCode> gpu_code;
  // The library names its C strings hold (scan/dlopen_names.h), for the same files.
  std::shared_ptr<const std::set<std::string>> dlopen_names;
  // The dynamic section (DT_NEEDED, RPATH, RUNPATH: scan/elf_dynamic.h), for the examined files and
  // the ones the dynamic predicate selected; shared by hard links.
  std::shared_ptr<const ElfDynamic> elf;
};

struct ContentsLimits {
  size_t max_entries = 4'000'000;       // tar entries over all layers
  size_t max_path = 4096;               // bytes in one entry's path or link target (PATH_MAX)
  int64_t max_kept_bytes = 64ll << 20;  // kept file bytes over all layers
};

// A layer read but not merged (ContentsTree::scan_unmerged): what its tar held, in tar order.
struct ScannedLayer;

// One layer for add_layers(): where it is (for messages) and how to open its
// blob. open() runs on a scanning thread, only when that layer's turn comes.
struct LayerInput {
  std::string where;
  std::function<std::unique_ptr<image::BlobReader>()> open;
  int64_t size = 0;  // blob size, a hint: the biggest layers are started first (longest job first)
  // Already read (scan_unmerged: scan/stream_scans.h, the layer's tar as the image was saved):
  // merged as it is, open() never called.
  std::shared_ptr<const ScannedLayer> scanned;
};

// What scanning one layer read (for traces and the bench).
struct LayerStats {
  std::string codec;       // "gzip" | "zstd" | "none"
  int64_t compressed = 0;  // blob bytes read
  int64_t tar = 0;         // tar bytes decoded
  size_t entries = 0;
  double seconds = 0;
  size_t parallel_chunks = 0;  // gzip chunks decoded on worker threads (image/gunzip_parallel.h)
};

class ContentsTree {
 public:
  using KeepContent = std::function<bool(const std::string& path, int64_t size)>;
  using ExamineCode = std::function<bool(const std::string& path)>;
  explicit ContentsTree(KeepContent keep = nullptr, ContentsLimits limits = {})
      : keep_(std::move(keep)), limits_(limits) {}
  // Files whose bytes are streamed through scan::FatbinScanner as their layer is read (FsEntry::
  // gpu_code). Set before add_layer(s).
  void examine_code(ExamineCode pred) { examine_ = std::move(pred); }
  // Files whose dynamic section only is read (FsEntry::elf; the rest of the file skipped): the
  // libraries the loader model follows (scan::read_dynamic_for_loader). Set before add_layer(s).
  void examine_dynamic(ExamineCode pred) { dynamic_ = std::move(pred); }

  // Applies one layer (tar, tar+gzip or tar+zstd; detected from the bytes).
  // Reads `layer` to its end so a verifying reader checks the digest.
  // Throws imgtool::Error naming `where` if the stream is not such a tar or
  // passes a limit; the reader's own exception is rethrown as it was.
  LayerStats add_layer(image::BlobReader& layer, const std::string& where);

  // The same as add_layer() on each layer, lowest first, but up to `jobs`
  // layers (0: one per core) are read at once, each on its own thread; a
  // layer's scan is merged only after every layer below it was merged, so
  // whiteouts, opaque dirs, overrides and hard links mean what they mean
  // serially. The caps hold over all layers together. The first error (in
  // time) is thrown, as it was, after the other scans stopped (at their next
  // entry); the tree then holds an unspecified prefix of the layers.
  std::vector<LayerStats> add_layers(const std::vector<LayerInput>& layers, unsigned jobs = 0);

  // Reads one layer WITHOUT merging it, on the calling thread (any thread: only the tree's
  // settings are read, so several may run at once), for layers that arrive out of order; merged
  // later, in layer order, by add_layers (LayerInput::scanned). The caps hold for this layer
  // here and over all layers when it is merged. Throws as add_layer() does.
  std::shared_ptr<const ScannedLayer> scan_unmerged(image::BlobReader& layer, const std::string& where) const;

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
  struct LayerScan;
  friend struct ScannedLayer;
  struct Budget {  // the caps' counters, shared by concurrent scans
    std::atomic<size_t> entries{0};
    std::atomic<int64_t> kept{0};
    std::atomic<bool> stop{false};  // another scan failed: stop at the next entry
  };
  // scan() only reads keep_, limits_ and `budget`: safe on several threads at once.
  LayerScan scan(image::BlobReader& layer, const std::string& where, Budget& budget) const;
  LayerScan merged_counts(const ScannedLayer& l, const std::string& where, Budget& budget) const;
  void apply(LayerScan&& s);
  RawEntry read_entry(::archive* a, ::archive_entry* e, const std::string& where, Budget& budget) const;
  std::map<std::string, FsEntry> entries_;
  KeepContent keep_;
  ExamineCode examine_, dynamic_;
  ContentsLimits limits_;
  size_t seen_entries_ = 0;
  int64_t kept_bytes_ = 0;
};

// An image path's folder ("/usr/lib/x.so" -> "/usr/lib", "/x" -> "/") and last part.
std::string dirname_of(const std::string& path);
std::string basename_of(const std::string& path);

}  // namespace imgtool::scan
