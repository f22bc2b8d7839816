// One image repository as signing and promotion see it ("registry/ai/paddle"):
// manifests by tag or digest, blobs by digest, and writes. Implemented over
// the registry client (registry_repository.h) and in memory for unit tests.
//
// Contracts (same as image::ImageDestination)
//   - put_blob() every blob a manifest names before put_manifest().
//   - put_manifest(m, "") stores by digest only; with a tag, the tag moves last.
//   - manifest() returns nullopt when the tag/digest is unknown (404), and
//     throws imgtool::Error on any other failure. Bytes read by digest are
//     re-hashed by the implementation.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "image/image.h"

namespace imgtool::sign {

class Repository {
 public:
  virtual ~Repository() = default;
  virtual std::optional<image::Manifest> manifest(const std::string& tag_or_digest) = 0;
  virtual std::string blob(const image::Descriptor& d) = 0;  // small blobs only
  virtual bool has_blob(const image::Descriptor& d) = 0;
  virtual void put_blob(const image::Descriptor& d, const std::string& bytes) = 0;
  virtual void put_manifest(const image::Manifest& m, const std::string& tag) = 0;
  // "REGISTRY/REPO", the name identities are written against.
  virtual std::string name() const = 0;
};

// The manifest `tag_or_digest` names, read ONCE (one GET); use its digest()
// (sha256 over exactly these bytes) for everything that follows, so a tag
// moved meanwhile, or a registry answering HEAD and GET differently, cannot
// split one operation across two images. CheckFailed if it is not there.
image::Manifest resolve_manifest(Repository& repo, const std::string& tag_or_digest);

// In-memory repository for tests and dry runs.
class MemoryRepository : public Repository {
 public:
  explicit MemoryRepository(std::string name) : name_(std::move(name)) {}
  std::optional<image::Manifest> manifest(const std::string& tag_or_digest) override;
  std::string blob(const image::Descriptor& d) override;
  bool has_blob(const image::Descriptor& d) override { return blobs.count(d.digest) > 0; }
  void put_blob(const image::Descriptor& d, const std::string& bytes) override;
  void put_manifest(const image::Manifest& m, const std::string& tag) override;
  std::string name() const override { return name_; }

  std::map<std::string, std::string> blobs;            // digest -> bytes
  std::map<std::string, image::Manifest> manifests;    // digest -> manifest
  std::map<std::string, std::string> tags;             // tag -> digest
 private:
  std::string name_;
};

}  // namespace imgtool::sign
