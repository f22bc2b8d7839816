#include "sign/registry_repository.h"

#include "core/hash.h"

namespace imgtool::sign {

std::optional<image::Manifest> RegistryRepository::manifest(const std::string& ref) {
  try {
    return reg_.get_manifest(repo_, ref);
  } catch (const image::RegistryError& e) {
    if (e.status == 404) return std::nullopt;
    throw;
  }
}

void RegistryRepository::put_blob(const image::Descriptor& d, const std::string& bytes) {
  image::Descriptor stored = reg_.put_blob(repo_, bytes, d.media_type);
  if (stored.digest != d.digest)
    throw Error(name() + ": blob stored as " + stored.digest + ", expected " + d.digest);
}

void RegistryRepository::put_manifest(const image::Manifest& m, const std::string& tag) {
  reg_.put_manifest(repo_, tag.empty() ? m.digest() : tag, m.raw, m.media_type);
}

}  // namespace imgtool::sign
