#include "image/registry_session.h"

namespace imgtool::image {

std::shared_ptr<Registry> RegistrySession::registry(const std::string& host, const RegistryOptions& o) {
  std::lock_guard lk(mu_);
  auto& r = by_host_[host];
  if (!r) r = std::make_shared<Registry>(host, o);
  return r;
}

size_t RegistrySession::size() const {
  std::lock_guard lk(mu_);
  return by_host_.size();
}

}  // namespace imgtool::image
