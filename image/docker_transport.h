// The docker:// transport: an image in a registry repository, over Registry.
//
//   DockerSource       the manifest by tag or digest; blobs streamed and re-hashed.
//   DockerDestination  blobs: HEAD and skip, else cross-repository mount (when a
//                      mount source is set, same registry), else upload;
//                      manifest: skipped when a HEAD of the tag shows the same
//                      digest, else PUT by tag (or by digest when no tag) — the
//                      tag moves only here, after every blob is in.
#pragma once
#include <memory>

#include "image/image.h"
#include "image/registry.h"

namespace imgtool::image {

class DockerSource : public ImageSource {
 public:
  // ref: a tag or "sha256:<hex>".
  DockerSource(std::shared_ptr<Registry> reg, std::string repo, std::string ref);
  Manifest manifest() override;
  std::unique_ptr<BlobReader> open_blob(const Descriptor& d) override;
  std::string describe() const override;
  std::optional<MountOrigin> mount_origin() const override { return MountOrigin{reg_->host(), repo_}; }
  Registry& registry() { return *reg_; }
  const std::string& repo() const { return repo_; }

 private:
  std::shared_ptr<Registry> reg_;
  std::string repo_, ref_;
};

class DockerDestination : public ImageDestination {
 public:
  DockerDestination(std::shared_ptr<Registry> reg, std::string repo);
  bool has_blob(const Descriptor& d) override;
  void put_blob(const Descriptor& d, BlobReader& content) override;
  bool accepts_streams() const override { return true; }
  Descriptor put_blob_stream(StreamingBlob& content) override;  // chunked upload (Registry::put_blob_stream)
  void put_manifest(const Manifest& m, const std::string& tag) override;
  std::string describe() const override;
  // Blobs missing here are first mounted from the origin's repository when it is on this registry.
  void offer_mount(const MountOrigin& o) override {
    if (o.host == reg_->host()) mount_from_ = o.repo;
  }
  Registry& registry() { return *reg_; }
  const std::string& repo() const { return repo_; }
  bool manifest_skipped() const { return manifest_skipped_; }

 private:
  std::shared_ptr<Registry> reg_;
  std::string repo_, mount_from_;
  bool manifest_skipped_ = false;
};

}  // namespace imgtool::image
