#include "image/docker_transport.h"

namespace imgtool::image {

DockerSource::DockerSource(std::shared_ptr<Registry> reg, std::string repo, std::string ref)
    : reg_(std::move(reg)), repo_(std::move(repo)), ref_(std::move(ref)) {}

std::string DockerSource::describe() const {
  return "docker://" + reg_->host() + "/" + repo_ + (ref_.rfind("sha256:", 0) == 0 ? "@" : ":") + ref_;
}

Manifest DockerSource::manifest() { return reg_->get_manifest(repo_, ref_); }

std::unique_ptr<BlobReader> DockerSource::open_blob(const Descriptor& d) { return reg_->get_blob(repo_, d); }

DockerDestination::DockerDestination(std::shared_ptr<Registry> reg, std::string repo)
    : reg_(std::move(reg)), repo_(std::move(repo)) {}

std::string DockerDestination::describe() const { return "docker://" + reg_->host() + "/" + repo_; }

bool DockerDestination::has_blob(const Descriptor& d) {
  if (reg_->head_blob(repo_, d.digest)) return true;
  return !mount_from_.empty() && mount_from_ != repo_ && reg_->mount_blob(repo_, d.digest, mount_from_);
}

void DockerDestination::put_blob(const Descriptor& d, BlobReader& content) { reg_->put_blob(repo_, d, content); }

Descriptor DockerDestination::put_blob_stream(StreamingBlob& content) { return reg_->put_blob_stream(repo_, content); }

void DockerDestination::put_manifest(const Manifest& m, const std::string& tag) {
  std::string ref = tag.empty() ? m.digest() : tag;
  if (auto cur = reg_->head_manifest(repo_, ref); cur && cur->digest == m.digest()) {
    manifest_skipped_ = true;
    return;
  }
  reg_->put_manifest(repo_, ref, m.raw, m.media_type);
}

}  // namespace imgtool::image
