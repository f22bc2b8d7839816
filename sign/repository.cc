#include "sign/repository.h"

#include "core/error.h"
#include "core/hash.h"

namespace imgtool::sign {

image::Manifest resolve_manifest(Repository& repo, const std::string& ref) {
  auto m = repo.manifest(ref);
  if (!m)
    throw CheckFailed(repo.name() + (is_sha256_digest(ref) ? "@" : ":") + ref +
                      ": expected a manifest in the repository, found none");
  if (is_sha256_digest(ref) && m->digest() != ref)
    throw CheckFailed(repo.name() + "@" + ref + ": expected the manifest bytes to hash to that digest, found " +
                      m->digest() + " (tampered or corrupted answer)");
  return *m;
}

std::optional<image::Manifest> MemoryRepository::manifest(const std::string& ref) {
  std::string digest = ref;
  if (!is_sha256_digest(ref)) {
    auto t = tags.find(ref);
    if (t == tags.end()) return std::nullopt;
    digest = t->second;
  }
  auto m = manifests.find(digest);
  if (m == manifests.end()) return std::nullopt;
  return m->second;
}

std::string MemoryRepository::blob(const image::Descriptor& d) {
  auto b = blobs.find(d.digest);
  if (b == blobs.end()) throw Error(name_ + ": blob " + d.digest + " not found");
  return b->second;
}

void MemoryRepository::put_blob(const image::Descriptor& d, const std::string& bytes) {
  if (sha256_digest(bytes) != d.digest)
    throw Error(name_ + ": blob digest mismatch: expected " + d.digest + ", found " + sha256_digest(bytes));
  blobs[d.digest] = bytes;
}

void MemoryRepository::put_manifest(const image::Manifest& m, const std::string& tag) {
  for (const auto& d : m.layers())
    if (!blobs.count(d.digest)) throw Error(name_ + ": manifest names missing blob " + d.digest);
  manifests[m.digest()] = m;
  if (!tag.empty()) tags[tag] = m.digest();
}

}  // namespace imgtool::sign
