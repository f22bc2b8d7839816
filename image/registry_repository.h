// image::Repository over the registry client: one repository of one registry.
#pragma once
#include <memory>

#include "image/registry.h"
#include "image/repository.h"

namespace imgtool::image {

class RegistryRepository : public Repository {
 public:
  // `repo` is the path ("ai/paddle").
  RegistryRepository(std::shared_ptr<Registry> registry, std::string repo)
      : reg_(std::move(registry)), repo_(std::move(repo)) {}
  // Over a registry client the caller owns; it must outlive this object (and what source() and
  // destination() return).
  RegistryRepository(Registry& registry, std::string repo)
      : reg_(std::shared_ptr<Registry>(&registry, [](Registry*) {})), repo_(std::move(repo)) {}
  std::optional<Manifest> manifest(const std::string& tag_or_digest) override;
  std::string blob(const Descriptor& d) override { return reg_->get_blob_bytes(repo_, d); }
  bool has_blob(const Descriptor& d) override { return reg_->head_blob(repo_, d.digest).has_value(); }
  void put_blob(const Descriptor& d, const std::string& bytes) override;
  void put_manifest(const Manifest& m, const std::string& tag) override;
  std::string name() const override { return reg_->host() + "/" + repo_; }
  std::unique_ptr<ImageSource> source(const std::string& tag_or_digest) override;
  std::unique_ptr<ImageDestination> destination() override;

  Registry& registry() { return *reg_; }
  const std::string& path() const { return repo_; }

 private:
  std::shared_ptr<Registry> reg_;
  std::string repo_;
};

}  // namespace imgtool::image
