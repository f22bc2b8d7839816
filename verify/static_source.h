// An image::ImageSource reading one image from a registry (docker://), for
// verify: the manifest (an index is narrowed to linux/amd64) and streamed,
// re-hashed blobs. Thin adapter over image::Registry.
#pragma once
#include "image/registry.h"

namespace imgtool::verify {

class RegistryImageSource : public image::ImageSource {
 public:
  // `ref` is a tag or a digest; `registry` must outlive this object.
  RegistryImageSource(image::Registry& registry, std::string repo, std::string ref)
      : reg_(registry), repo_(std::move(repo)), ref_(std::move(ref)) {}
  image::Manifest manifest() override;
  std::unique_ptr<image::BlobReader> open_blob(const image::Descriptor& d) override {
    return reg_.get_blob(repo_, d);
  }
  std::string describe() const override { return "docker://" + reg_.host() + "/" + repo_ + ":" + ref_; }
 private:
  image::Registry& reg_;
  std::string repo_, ref_;
};

// Picks the linux/amd64 manifest digest from an index; Error if none.
std::string pick_platform(const image::Manifest& index, const std::string& where);

}  // namespace imgtool::verify
