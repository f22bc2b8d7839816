#include "image/repository.h"

#include "core/error.h"
#include "core/hash.h"

namespace imgtool::image {

Manifest resolve_manifest(Repository& repo, const std::string& ref) {
  auto m = repo.manifest(ref);
  if (!m)
    throw CheckFailed(repo.name() + (is_sha256_digest(ref) ? "@" : ":") + ref +
                      ": expected a manifest in the repository, found none");
  if (is_sha256_digest(ref) && m->digest() != ref)
    throw CheckFailed(repo.name() + "@" + ref + ": expected the manifest bytes to hash to that digest, found " +
                      m->digest() + " (tampered or corrupted answer)");
  return *m;
}

std::optional<Manifest> MemoryRepository::manifest(const std::string& ref) { return store_->manifest(ref); }

std::string MemoryRepository::blob(const Descriptor& d) {
  auto b = store_->blob(d.digest);
  if (!b) throw Error(name_ + ": blob " + d.digest + " not found");
  return *b;
}

void MemoryRepository::put_blob(const Descriptor& d, const std::string& bytes) {
  if (sha256_digest(bytes) != d.digest)
    throw Error(name_ + ": blob digest mismatch: expected " + d.digest + ", found " + sha256_digest(bytes));
  store_->put_blob(d.digest, bytes);
}

void MemoryRepository::put_manifest(const Manifest& m, const std::string& tag) {
  for (const auto& d : m.layers())
    if (!store_->has_blob(d.digest)) throw Error(name_ + ": manifest names missing blob " + d.digest);
  store_->put_manifest(m, tag);
}

std::unique_ptr<ImageSource> MemoryRepository::source(const std::string& ref) {
  return std::make_unique<MemorySource>(store_, ref);
}

std::unique_ptr<ImageDestination> MemoryRepository::destination() {
  return std::make_unique<MemoryDestination>(store_);
}

}  // namespace imgtool::image
