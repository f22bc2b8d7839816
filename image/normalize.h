// Deterministic images (issue 35): the same files give the same bytes, so the same build gives the
// same manifest digest on another day, on another machine.
//
//   NormalizeResult r = normalize_image(src, dst, {.epoch = sde, .rules = read_normalize_rules(file)});
//
// Each layer of `src` is read once (any compression; a second time only when its entries are out of
// path order, then through a spool file -- Docker writes them in order) and written to `dst` as a new
// layer. A source that hands out its layers uncompressed (docker-daemon:, ImageSource::tar_layers)
// is read in ONE pass of its save stream, each layer normalized on a thread of its own as it comes:
// its layers are compressed once, normalized, never first into the layer cache as they were built.
// Each layer:
//   - entries in one fixed order (by path; a hard-link group's first path carries the data),
//   - mtimes clamped to `epoch` (SOURCE_DATE_EPOCH: never later), atime/ctime/birthtime dropped,
//     owners, modes, xattrs, link targets and contents as built,
//   - the rules (image/normalize_rules.tsv, each with its reason) applied: `drop` removes files that
//     only record the build (apt/dpkg logs, ld.so's aux cache, shadow backups, pip caches); `pyc`
//     rewrites a timestamp-based .pyc's recorded source mtime the same way the source's is clamped,
//     so Python still trusts it and the bytes no longer say when it was built,
//   - compressed with the copy engine's gzip (image/compress.h: fixed header, fixed blocks), so the
//     same tar gives the same compressed digest.
// The config: `created` and every history `created` become `epoch`; `container` and
// `container_config` (the build container's ID and settings) and config.Image (the classic
// builder's intermediate parent) go; a history line's `COPY dir:<hash>` (a hash over the copied
// files' stat data) names its layer's new diff_id instead; rootfs.diff_ids name the new layers.
// The manifest (OCI media types) is written last, under `tag`.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "image/image.h"
#include "image/layer_cache.h"

namespace imgtool::image {

enum class NormalizeAction { drop, pyc };

struct NormalizeRule {
  NormalizeAction action = NormalizeAction::drop;
  std::string pattern;  // fnmatch(3) on the entry's path without a leading "./" or "/"; '*' spans '/'
  std::string reason;
};

// The rules file: lines `ACTION<TAB>PATTERN<TAB>REASON` (ACTION drop|pyc; '#' comments, blank lines).
// InputError "FILE:LINE: expected …, found …" for anything else.
std::vector<NormalizeRule> read_normalize_rules(const std::filesystem::path& file);
std::vector<NormalizeRule> parse_normalize_rules(const std::string& text, const std::string& where);
std::string normalize_action_name(NormalizeAction a);  // as the rules file writes it: "drop", "pyc"
std::filesystem::path default_normalize_rules();       // data_dir()/image/normalize_rules.tsv

struct NormalizeOptions {
  int64_t epoch = 0;  // SOURCE_DATE_EPOCH (seconds); required > 0
  std::vector<NormalizeRule> rules;
  int jobs = 2;  // compression threads
  // false: layers written as plain tars (media type kOciLayerTar, digest = diff_id), never cached.
  // The config, and so the image ID, is the same either way.
  bool compress = true;
  std::filesystem::path spool_dir;  // where a layer is spooled while it is put in order; "" = a private temp folder
  // With compress: the gzip layer cache (cache_dir()/layers/gzip) that remembers each normalized
  // layer (image/normalized_cache.h): a layer normalized before under the same epoch and rules is
  // not read again, and a new one is written into the cache as it is made. nullptr: none.
  LayerCache* cache = nullptr;
  bool reuse_cached = true;  // false: every layer normalized again, the cache's entries replaced
};

struct NormalizedLayer {
  std::string from_digest;  // the source's layer: the digest of the bytes read (a tar source's: its diff_id)
  Descriptor to;            // the written layer (gzip)
  std::string diff_id;
  std::vector<std::string> dropped;  // paths removed by a drop rule
  size_t pyc_rewritten = 0;
  size_t mtimes_clamped = 0;
  bool spooled = false;  // its entries came out of path order: put in order through a spool file
  bool cached = false;   // found in the normalized-layer cache: the source layer was not read
};

struct NormalizeResult {
  Manifest manifest;  // as written to dst
  std::vector<NormalizedLayer> layers;
};

NormalizeResult normalize_image(ImageSource& src, ImageDestination& dst, const NormalizeOptions& o,
                                const std::string& tag = "");

// What makes normalize_tar's bytes: raised whenever a change here changes them (a cached normalized
// layer is found only under the revision that made it).
std::string normalize_revision();

// The normalized tar of one layer (uncompressed), for tests and diffs: `layer` is a tar in any
// compression libarchive reads. Fills `out` with what was changed.
std::string normalize_layer_tar(const std::string& layer, const NormalizeOptions& o, NormalizedLayer& out);

// The config bytes with the rules above applied and `diff_ids` as rootfs.diff_ids.
std::string normalize_config(const std::string& config, int64_t epoch, const std::vector<std::string>& diff_ids);

}  // namespace imgtool::image
