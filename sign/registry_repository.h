// sign::Repository over the registry client: one repository of one registry.
#pragma once
#include "image/registry.h"
#include "sign/repository.h"

namespace imgtool::sign {

class RegistryRepository : public Repository {
 public:
  // `registry` must outlive this object; `repo` is the path ("ai/paddle").
  RegistryRepository(image::Registry& registry, std::string repo)
      : reg_(registry), repo_(std::move(repo)) {}
  std::optional<image::Manifest> manifest(const std::string& tag_or_digest) override;
  std::string blob(const image::Descriptor& d) override { return reg_.get_blob_bytes(repo_, d); }
  bool has_blob(const image::Descriptor& d) override { return reg_.head_blob(repo_, d.digest).has_value(); }
  void put_blob(const image::Descriptor& d, const std::string& bytes) override;
  void put_manifest(const image::Manifest& m, const std::string& tag) override;
  std::string name() const override { return reg_.host() + "/" + repo_; }
 private:
  image::Registry& reg_;
  std::string repo_;
};

}  // namespace imgtool::sign
