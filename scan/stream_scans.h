// Layers scanned while a source reads them uncompressed (image::BlobEvents::tar: the layers of a
// `docker save` stream, each handed out as the source compresses it), so the release gate reads
// an image once: no second read of the layers, no inflate of what was just compressed.
//
//   scan::ContentsTree tree(keep);
//   scan::StreamScans scans(tree);
//   image::Manifest m = src.manifest_streaming({.tar = scans.callback()});
//   scans.wait();
//   ... LayerInput{.where, .open, .size, .scanned = scans.find(diff_ids[i])} ... tree.add_layers(layers);
//
// Each stream is scanned on a thread of its own as it is made (ContentsTree::scan_unmerged), in
// the order the source writes the layers, and found afterwards by its diff_id (the digest the
// source gives the stream at its end). A layer the source did not stream (already in its cache),
// or whose scan failed, is not found: the caller reads it from the source as before, where the
// same failure then shows with its own message.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "image/image.h"
#include "scan/contents_tree.h"

namespace imgtool::scan {

class StreamScans {
 public:
  // `tree` gives the scans their settings (kept files, examined code, caps); it must outlive this.
  explicit StreamScans(const ContentsTree& tree, std::string where_prefix = "")
      : tree_(tree), where_(std::move(where_prefix)) {}
  ~StreamScans();  // abandons the streams still read and joins
  StreamScans(const StreamScans&) = delete;
  StreamScans& operator=(const StreamScans&) = delete;

  // The BlobEvents::tar callback: starts scanning the stream on a thread of its own.
  std::function<void(std::shared_ptr<image::StreamingBlob>)> callback();
  // Waits for every scan started.
  void wait();
  // The layer scanned from the stream that ended as `diff_id`, if any (after wait()).
  std::shared_ptr<const ScannedLayer> find(const std::string& diff_id) const;
  size_t scanned() const;

 private:
  void scan(const std::shared_ptr<image::StreamingBlob>& tar, const std::string& where);
  const ContentsTree& tree_;
  std::string where_;
  mutable std::mutex mu_;
  std::vector<std::thread> threads_;
  std::vector<std::shared_ptr<image::StreamingBlob>> streams_;
  std::map<std::string, std::shared_ptr<const ScannedLayer>> done_;  // diff_id -> its scan
};

}  // namespace imgtool::scan
