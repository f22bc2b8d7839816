// Test helpers for the layer scanner and its users: small tar layers made with libarchive
// (optionally gzip/zstd) and an in-memory ImageSource.
#pragma once
#include <archive.h>
#include <archive_entry.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "core/hash.h"
#include "image/blob.h"
#include "image/image.h"
#include "matrix/kb.h"
#include "scan/contents_tree.h"
#include "tests/source_kb.h"

namespace imgtool::scan::testing {

// A tree's every path with its type, link, size and kept bytes: two trees that mean the same
// filesystem compare equal.
using Snapshot = std::map<std::string, std::tuple<FsEntry::Type, std::string, int64_t, std::string>>;
inline Snapshot snapshot(const ContentsTree& t) {
  Snapshot s;
  for (const auto& [p, e] : t.entries()) s[p] = {e.type, e.link, e.size, e.content ? *e.content : "<none>"};
  return s;
}

// The source tree's knowledge base (driver floors for the claims check).
inline const matrix::KnowledgeBase& test_kb() { return imgtool::testing::source_kb(); }

struct TarItem {
  std::string path;
  std::string content;  // file bytes
  char type = 'f';      // 'f' file, 'd' dir, 'l' symlink (content = target), 'h' hardlink (content = target)
};

inline std::string make_tar(const std::vector<TarItem>& items, const std::string& filter = "") {
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  if (!filter.empty()) archive_write_add_filter_by_name(a, filter.c_str());  // gzip, zstd, xz, bzip2, ...
  // No time in the gzip header (libarchive writes the current second by default): the same items
  // give the same bytes, so a test comparing two builds of one layer does not fail across a second.
  if (filter == "gzip") archive_write_set_filter_option(a, "gzip", "timestamp", nullptr);
  std::string out(16 << 20, '\0');
  size_t used = 0;
  archive_write_open_memory(a, out.data(), out.size(), &used);
  for (const auto& it : items) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, it.path.c_str());
    archive_entry_set_perm(e, 0644);
    if (it.type == 'd') archive_entry_set_filetype(e, AE_IFDIR);
    if (it.type == 'l') {
      archive_entry_set_filetype(e, AE_IFLNK);
      archive_entry_set_symlink(e, it.content.c_str());
    }
    if (it.type == 'h') {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_hardlink(e, it.content.c_str());
    }
    if (it.type == 'f') {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_size(e, static_cast<la_int64_t>(it.content.size()));
    }
    archive_write_header(a, e);
    if (it.type == 'f') archive_write_data(a, it.content.data(), it.content.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  out.resize(used);
  return out;
}

// An image held in memory: config JSON + layers; serves blobs by digest.
class MemorySource : public image::ImageSource {
 public:
  MemorySource(const nlohmann::json& config, const std::vector<std::string>& layers) {
    nlohmann::json ls = nlohmann::json::array();
    for (const auto& l : layers) ls.push_back(add(l, image::media::kOciLayerGzip));
    image::Descriptor c = add(config.dump(), image::media::kOciConfig);
    nlohmann::json m = {{"schemaVersion", 2}, {"mediaType", image::media::kOciManifest}, {"config", c}, {"layers", ls}};
    manifest_ = {m.dump(), image::media::kOciManifest};
  }
  image::Manifest manifest() override { return manifest_; }
  std::unique_ptr<image::BlobReader> open_blob(const image::Descriptor& d) override {
    return std::make_unique<image::StringReader>(blobs_.at(d.digest));
  }
  std::string describe() const override { return "memory:"; }
  std::map<std::string, std::string> blobs_;

 private:
  image::Descriptor add(const std::string& bytes, const char* mt) {
    blobs_[sha256_digest(bytes)] = bytes;
    return {mt, sha256_digest(bytes), static_cast<int64_t>(bytes.size()), {}};
  }
  image::Manifest manifest_;
};

// A source that counts the layer blobs opened (the config is read by several steps, layers only by
// scans and pushes): what tests of "the image is read once" count.
struct CountingLayers : image::ImageSource {
  explicit CountingLayers(image::ImageSource& s) : src(s) {}
  image::Manifest manifest() override { return src.manifest(); }
  std::unique_ptr<image::BlobReader> open_blob(const image::Descriptor& d) override {
    if (d.media_type != image::media::kOciConfig) ++layer_opens;
    return src.open_blob(d);
  }
  std::string describe() const override { return src.describe(); }
  image::ImageSource& src;
  int layer_opens = 0;
};

inline nlohmann::json config_with(const std::map<std::string, std::string>& labels,
                                  const std::vector<std::string>& env = {}) {
  nlohmann::json c = {{"architecture", "amd64"},
                      {"os", "linux"},
                      {"config", {{"Labels", labels}, {"Env", env}}},
                      {"rootfs", {{"type", "layers"}, {"diff_ids", nlohmann::json::array()}}}};
  return c;
}

inline std::string paddle_version_py(const std::string& cuda, const std::string& cudnn) {
  return "full_version     = '3.2.0'\ncuda_version     = '" + cuda + "'\ncudnn_version    = '" + cudnn +
         "'\nwith_pip_cuda_libraries = 'ON'\n";
}

// A filesystem with Python 3.X and a paddle distribution (gpu: cuda != "False").
inline std::vector<TarItem> python_paddle_layer(const std::string& py, const std::string& dist,
                                                const std::string& version, const std::string& cuda,
                                                const std::string& cudnn = "False") {
  std::string site = "usr/local/lib/python" + py + "/dist-packages";
  return {{"usr/lib/python" + py + "/os.py", "# os", 'f'},
          {site + "/" + dist + "-" + version + ".dist-info/METADATA", "Name: " + dist + "\nVersion: " + version + "\n",
           'f'},
          {site + "/paddle/version/__init__.py", paddle_version_py(cuda, cudnn), 'f'}};
}

// Adds one layer made of `items` (tar, compressed with libarchive filter `filter`) to `t`.
inline void add(ContentsTree& t, const std::vector<TarItem>& items, const std::string& filter = "") {
  image::StringReader r(make_tar(items, filter));
  t.add_layer(r, "test layer");
}

}  // namespace imgtool::scan::testing
