// Two images compared as diffoci does: the manifests' digests, then layer by layer (by diff_id),
// and for the first layer that differs, the files that differ in it (path; size, mode, link,
// content hash, mtime on either side). What `imgtool diff A B` prints and what a reproduction
// (issue 35) reports when a rebuild does not give the published digest.
//
//   ImageDifference d = diff_images(published, rebuilt);
//   d.same                  equal manifest digests
//   d.layer                 index of the first layer whose diff_id differs (-1: none; the config differs)
//   d.files                 that layer's differing files, path order, at most `max_files`
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "image/image.h"

namespace imgtool::image {

struct FileFacts {
  int64_t size = 0;
  unsigned mode = 0;   // type and permission bits
  std::string sha256;  // of the contents (regular files)
  std::string link;    // symlink or hard-link target
  int64_t mtime = 0;
  bool operator==(const FileFacts&) const = default;
};

struct FileDifference {
  std::string path;
  std::optional<FileFacts> a, b;  // absent: the file is only on the other side
};

struct ImageDifference {
  bool same = false;
  std::string a_digest, b_digest;
  int layer = -1;  // first differing layer, by position
  size_t a_layers = 0, b_layers = 0;
  bool config_differs = false;           // the configs' digests
  std::vector<std::string> config_keys;  // top-level config keys whose values differ
  std::vector<FileDifference> files;     // in `layer`
  size_t more_files = 0;                 // differing files past max_files
};

ImageDifference diff_images(ImageSource& a, ImageSource& b, size_t max_files = 50);

// One line per difference, for a terminal.
std::string render_difference(const ImageDifference& d);

}  // namespace imgtool::image
