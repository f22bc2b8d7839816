// In-memory images: the doubles beside the model (as go-containerregistry
// ships `random` and an in-memory registry). No engine, no registry, no disk.
//
//   MemoryStore        blobs and manifests by digest, tags → digest, and a log
//                      of every write ("blob <digest>", "manifest <digest> tag <t>")
//                      so a test can check the order a copy wrote in.
//   MemorySource       one image (a manifest and its blobs) read from a store;
//                      every blob re-hashed as it is read (VerifyingReader).
//   MemoryDestination  writes into a store; the blob digest is verified; a
//                      fault can be injected per blob digest or on the manifest.
//   MemoryTarSource    a MemorySource that also hands its layers out as tars (docker-daemon:'s save path).
//   random_image()     an image of n random layers (+ config) put into a store.
//
// Thread-safe: the copy engine writes blobs from several threads.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "image/image.h"

namespace imgtool::image {

class MemoryStore {
 public:
  void put_blob(const std::string& digest, std::string bytes);
  std::optional<std::string> blob(const std::string& digest) const;
  bool has_blob(const std::string& digest) const;
  void put_manifest(const Manifest& m, const std::string& tag);  // tag "" = by digest only
  std::optional<Manifest> manifest(const std::string& digest_or_tag) const;
  std::optional<std::string> tag(const std::string& tag) const;  // the digest it names
  std::vector<std::string> log() const;                          // writes, in order
  // Fault injection: `key` (a digest or tag) serves `m` from now on, whatever m's own digest is
  // (a registry that answers with other bytes than it was given).
  void serve_instead(const std::string& key, const Manifest& m);
  // A copy of everything held now (a reader's stale view, for race tests).
  std::shared_ptr<MemoryStore> snapshot() const;
  // Adds every blob `other` holds (what a second writer uploaded).
  void add_blobs_of(const MemoryStore& other);

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> blobs_;
  std::map<std::string, Manifest> manifests_;
  std::map<std::string, std::string> tags_;
  std::vector<std::string> log_;
};

class MemorySource : public ImageSource {
 public:
  // `ref`: a tag or digest in the store. Error (on manifest()) when unknown.
  MemorySource(std::shared_ptr<MemoryStore> store, std::string ref);
  Manifest manifest() override;
  std::unique_ptr<BlobReader> open_blob(const Descriptor& d) override;
  std::string describe() const override { return "memory:" + ref_; }

 private:
  std::shared_ptr<MemoryStore> store_;
  std::string ref_;
};

// A double of docker-daemon:'s tar path (image/daemon_transport.h): the same image, its layers also
// handed out uncompressed (tar_layers/read_tars), inflated from the store; each read_tars() is one
// "save", the wanted layers streamed in order through bounded streams the caller drains on other
// threads. `held` per layer: a compressed blob open_blob() serves already (the daemon's layer
// cache). Counts its reads.
class MemoryTarSource : public MemorySource {
 public:
  MemoryTarSource(std::shared_ptr<MemoryStore> store, std::string ref, std::vector<bool> held = {});
  std::optional<TarLayers> tar_layers() override;
  void read_tars(const std::vector<std::string>& want, const TarSink& each) override;
  int reads = 0;            // read_tars() calls that read layers: the "saves"
  int layer_reads = 0;      // layers opened through open_blob()
  bool stream_all = false;  // every layer comes, wanted or not (a legacy save's folders not seen before)
  std::unique_ptr<BlobReader> open_blob(const Descriptor& d) override;

 private:
  std::vector<std::string> tars_;  // the layers inflated, in order
  std::vector<Descriptor> stored_;
  std::vector<bool> held_;
};

class MemoryDestination : public ImageDestination {
 public:
  explicit MemoryDestination(std::shared_ptr<MemoryStore> store) : store_(std::move(store)) {}
  bool has_blob(const Descriptor& d) override { return store_->has_blob(d.digest); }
  void put_blob(const Descriptor& d, BlobReader& content) override;
  void put_manifest(const Manifest& m, const std::string& tag) override;
  std::string describe() const override { return "memory"; }
  // Fault injection: putting this blob (or any manifest) throws imgtool::Error.
  void fail_blob(const std::string& digest, bool retryable = false);
  void fail_manifest() { fail_manifest_ = true; }

 private:
  std::shared_ptr<MemoryStore> store_;
  std::mutex mu_;
  std::map<std::string, bool> fail_blobs_;  // digest -> retryable
  bool fail_manifest_ = false;
};

// Puts an OCI image of `layers` random uncompressed layers of `bytes` each
// (and its config) into `store` under `tag` ("" = by digest only); returns its manifest.
Manifest random_image(MemoryStore& store, int layers, size_t bytes, const std::string& tag = "");

}  // namespace imgtool::image
