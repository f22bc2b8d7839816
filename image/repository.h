// One image repository ("registry/ai/paddle"): manifests by tag or digest, blobs by digest, and
// writes -- the one interface signing, attesting, promotion and publication see. Implemented over
// the registry client (registry_repository.h) and in memory (MemoryRepository below, over
// memory.h's MemoryStore: the double beside the model, as go-containerregistry's in-memory
// registry). A repository also opens an image in it as a copy-engine source, and a destination
// writing into it, so one object carries a publication from push to tag.
//
// Contracts (same as ImageDestination)
//   - put_blob() every blob a manifest names before put_manifest().
//   - put_manifest(m, "") stores by digest only; with a tag, the tag moves last.
//   - manifest() returns nullopt when the tag/digest is unknown (404), and
//     throws imgtool::Error on any other failure. Bytes read by digest are
//     re-hashed by the implementation.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "image/image.h"
#include "image/memory.h"

namespace imgtool::image {

class Repository {
 public:
  virtual ~Repository() = default;
  virtual std::optional<Manifest> manifest(const std::string& tag_or_digest) = 0;
  virtual std::string blob(const Descriptor& d) = 0;  // small blobs only
  virtual bool has_blob(const Descriptor& d) = 0;
  virtual void put_blob(const Descriptor& d, const std::string& bytes) = 0;
  virtual void put_manifest(const Manifest& m, const std::string& tag) = 0;
  // "REGISTRY/REPO", the name identities are written against.
  virtual std::string name() const = 0;
  // The image `tag_or_digest` of this repository, as the copy engine and the scanners read it.
  virtual std::unique_ptr<ImageSource> source(const std::string& tag_or_digest) = 0;
  // Writes into this repository (blobs, then the manifest; by digest when the tag is "").
  virtual std::unique_ptr<ImageDestination> destination() = 0;
};

// The manifest `tag_or_digest` names, read ONCE (one GET); use its digest()
// (sha256 over exactly these bytes) for everything that follows, so a tag
// moved meanwhile, or a registry answering HEAD and GET differently, cannot
// split one operation across two images. CheckFailed if it is not there.
Manifest resolve_manifest(Repository& repo, const std::string& tag_or_digest);

// A repository held in memory (tests, dry runs). Several repositories may share one store
// (one "registry"); the store's log records every write in order.
class MemoryRepository : public Repository {
 public:
  explicit MemoryRepository(std::string name, std::shared_ptr<MemoryStore> store = std::make_shared<MemoryStore>())
      : name_(std::move(name)), store_(std::move(store)) {}
  std::optional<Manifest> manifest(const std::string& tag_or_digest) override;
  std::string blob(const Descriptor& d) override;
  bool has_blob(const Descriptor& d) override { return store_->has_blob(d.digest); }
  void put_blob(const Descriptor& d, const std::string& bytes) override;
  void put_manifest(const Manifest& m, const std::string& tag) override;
  std::string name() const override { return name_; }
  std::unique_ptr<ImageSource> source(const std::string& tag_or_digest) override;
  std::unique_ptr<ImageDestination> destination() override;

  MemoryStore& store() { return *store_; }
  std::optional<std::string> tag(const std::string& t) const { return store_->tag(t); }  // the digest it names

 private:
  std::string name_;
  std::shared_ptr<MemoryStore> store_;
};

}  // namespace imgtool::image
