#include "image/registry_repository.h"

#include "core/hash.h"
#include "image/docker_transport.h"

namespace imgtool::image {

std::optional<Manifest> RegistryRepository::manifest(const std::string& ref) {
  try {
    return reg_->get_manifest(repo_, ref);
  } catch (const RegistryError& e) {
    if (e.status == 404) return std::nullopt;
    throw;
  }
}

void RegistryRepository::put_blob(const Descriptor& d, const std::string& bytes) {
  Descriptor stored = reg_->put_blob(repo_, bytes, d.media_type);
  if (stored.digest != d.digest) throw Error(name() + ": blob stored as " + stored.digest + ", expected " + d.digest);
}

void RegistryRepository::put_manifest(const Manifest& m, const std::string& tag) {
  reg_->put_manifest(repo_, tag.empty() ? m.digest() : tag, m.raw, m.media_type);
}

std::unique_ptr<ImageSource> RegistryRepository::source(const std::string& ref) {
  return std::make_unique<DockerSource>(reg_, repo_, ref);
}

std::unique_ptr<ImageDestination> RegistryRepository::destination() {
  return std::make_unique<DockerDestination>(reg_, repo_);
}

}  // namespace imgtool::image
