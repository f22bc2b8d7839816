#include "image/memory.h"

#include <algorithm>
#include <random>

#include "core/error.h"
#include "core/hash.h"
#include "image/blob.h"
#include "image/inflate.h"

namespace imgtool::image {

void MemoryStore::put_blob(const std::string& digest, std::string bytes) {
  std::lock_guard lk(mu_);
  blobs_[digest] = std::move(bytes);
  log_.push_back("blob " + digest);
}

std::optional<std::string> MemoryStore::blob(const std::string& digest) const {
  std::lock_guard lk(mu_);
  auto it = blobs_.find(digest);
  return it == blobs_.end() ? std::nullopt : std::optional(it->second);
}

bool MemoryStore::has_blob(const std::string& digest) const {
  std::lock_guard lk(mu_);
  return blobs_.count(digest) > 0;
}

void MemoryStore::put_manifest(const Manifest& m, const std::string& tag) {
  std::lock_guard lk(mu_);
  manifests_[m.digest()] = m;
  if (!tag.empty()) tags_[tag] = m.digest();
  log_.push_back("manifest " + m.digest() + (tag.empty() ? "" : " tag " + tag));
}

std::optional<Manifest> MemoryStore::manifest(const std::string& digest_or_tag) const {
  std::lock_guard lk(mu_);
  auto t = tags_.find(digest_or_tag);
  auto it = manifests_.find(t == tags_.end() ? digest_or_tag : t->second);
  return it == manifests_.end() ? std::nullopt : std::optional(it->second);
}

std::optional<std::string> MemoryStore::tag(const std::string& tag) const {
  std::lock_guard lk(mu_);
  auto it = tags_.find(tag);
  return it == tags_.end() ? std::nullopt : std::optional(it->second);
}

void MemoryStore::serve_instead(const std::string& key, const Manifest& m) {
  std::lock_guard lk(mu_);
  manifests_[key] = m;
  tags_.erase(key);
}

std::shared_ptr<MemoryStore> MemoryStore::snapshot() const {
  std::lock_guard lk(mu_);
  auto s = std::make_shared<MemoryStore>();
  s->blobs_ = blobs_;
  s->manifests_ = manifests_;
  s->tags_ = tags_;
  s->log_ = log_;
  return s;
}

void MemoryStore::add_blobs_of(const MemoryStore& other) {
  std::map<std::string, std::string> theirs;
  {
    std::lock_guard lk(other.mu_);
    theirs = other.blobs_;
  }
  std::lock_guard lk(mu_);
  blobs_.insert(theirs.begin(), theirs.end());
}

std::vector<std::string> MemoryStore::log() const {
  std::lock_guard lk(mu_);
  return log_;
}

MemorySource::MemorySource(std::shared_ptr<MemoryStore> store, std::string ref)
    : store_(std::move(store)), ref_(std::move(ref)) {}

Manifest MemorySource::manifest() {
  auto m = store_->manifest(ref_);
  if (!m) throw Error(describe() + ": expected a manifest, found none");
  return *m;
}

std::unique_ptr<BlobReader> MemorySource::open_blob(const Descriptor& d) {
  auto bytes = store_->blob(d.digest);
  if (!bytes) throw Error(describe() + ": expected blob " + d.digest + ", found none");
  return std::make_unique<VerifyingReader>(std::make_unique<StringReader>(*bytes), d, describe());
}

MemoryTarSource::MemoryTarSource(std::shared_ptr<MemoryStore> store, std::string ref, std::vector<bool> held)
    : MemorySource(std::move(store), std::move(ref)), held_(std::move(held)) {
  stored_ = MemorySource::manifest().layers();
  for (const auto& d : stored_) {
    auto blob = MemorySource::open_blob(d);
    InflatingReader tar(*blob, describe(), 1);
    tars_.push_back(read_all(tar, size_t(1) << 30));
  }
  held_.resize(tars_.size(), false);
}

std::optional<TarLayers> MemoryTarSource::tar_layers() {
  TarLayers t{.config_digest = MemorySource::manifest().config().digest};
  for (size_t i = 0; i < tars_.size(); ++i) {
    t.diff_ids.push_back(sha256_digest(tars_[i]));
    t.stored.push_back(held_[i] ? std::optional(stored_[i]) : std::nullopt);
  }
  return t;
}

void MemoryTarSource::read_tars(const std::vector<std::string>& want, const TarSink& each) {
  if (want.empty()) return;
  ++reads;
  std::set<std::string> sent;
  for (const auto& tar : tars_) {
    std::string id = sha256_digest(tar);
    if ((!stream_all && !std::count(want.begin(), want.end(), id)) || !sent.insert(id).second) continue;
    auto s = std::make_shared<GrowingBlob>(media::kOciLayerTar, 64 << 10);  // small: the reader must keep up
    each(s);
    for (size_t at = 0; at < tar.size(); at += 4096)
      if (!s->push(tar.data() + at, std::min<size_t>(4096, tar.size() - at))) break;  // abandoned
    s->end(Descriptor{media::kOciLayerTar, id, int64_t(tar.size()), {}});
  }
}

std::unique_ptr<BlobReader> MemoryTarSource::open_blob(const Descriptor& d) {
  if (d.media_type != media::kOciConfig && d.media_type != media::kDockerConfig) ++layer_reads;
  return MemorySource::open_blob(d);
}

void MemoryDestination::put_blob(const Descriptor& d, BlobReader& content) {
  {
    std::lock_guard lk(mu_);
    auto it = fail_blobs_.find(d.digest);
    if (it != fail_blobs_.end()) throw Error("memory: injected failure storing " + d.digest, it->second);
  }
  std::string bytes = read_all(content);
  if (sha256_digest(bytes) != d.digest)
    throw Error("memory: blob " + d.digest + " arrived with digest " + sha256_digest(bytes));
  store_->put_blob(d.digest, std::move(bytes));
}

void MemoryDestination::put_manifest(const Manifest& m, const std::string& tag) {
  if (fail_manifest_) throw Error("memory: injected failure storing manifest " + m.digest());
  for (const auto& d : m.layers())
    if (!store_->has_blob(d.digest)) throw Error("memory: manifest names blob " + d.digest + ", not stored");
  if (!store_->has_blob(m.config().digest)) throw Error("memory: manifest names config, not stored");
  store_->put_manifest(m, tag);
}

void MemoryDestination::fail_blob(const std::string& digest, bool retryable) {
  std::lock_guard lk(mu_);
  fail_blobs_[digest] = retryable;
}

Manifest random_image(MemoryStore& store, int layers, size_t bytes, const std::string& tag) {
  static std::mt19937_64 rng(std::random_device{}());
  nlohmann::json diff_ids = nlohmann::json::array(), descs = nlohmann::json::array();
  for (int i = 0; i < layers; ++i) {
    std::string data(bytes, '\0');
    for (auto& c : data) c = static_cast<char>(rng());
    std::string digest = sha256_digest(data);
    diff_ids.push_back(digest);
    descs.push_back(Descriptor{media::kOciLayerTar, digest, static_cast<int64_t>(data.size()), {}});
    store.put_blob(digest, std::move(data));
  }
  std::string config =
      nlohmann::json{
          {"architecture", "amd64"}, {"os", "linux"}, {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}}
          .dump();
  Descriptor cfg{media::kOciConfig, sha256_digest(config), static_cast<int64_t>(config.size()), {}};
  store.put_blob(cfg.digest, config);
  Manifest m;
  m.media_type = media::kOciManifest;
  m.raw = nlohmann::json{{"schemaVersion", 2}, {"mediaType", media::kOciManifest}, {"config", cfg}, {"layers", descs}}
              .dump();
  store.put_manifest(m, tag);
  return m;
}

}  // namespace imgtool::image
