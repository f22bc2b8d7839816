// One operation's registry clients: one Registry per host, so a verify, a copy, a promote or a
// nightly probes each host's /v2/ once and asks for each token once, however many sources,
// destinations and signature repositories it opens there. It travels in TransportOptions
// (image/transport.h; copies share it): the CLI makes one per command (cli/sign_common.h,
// RegistryFlags) and hands it down, and image::registry_for / image::open_repository answer from it.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "image/registry.h"

namespace imgtool::image {

class RegistrySession {
 public:
  // The client for `host`: made with `o` on the first call for that host, the same one after.
  std::shared_ptr<Registry> registry(const std::string& host, const RegistryOptions& o);
  // How many clients (hosts) this session made.
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Registry>> by_host_;
};

}  // namespace imgtool::image
