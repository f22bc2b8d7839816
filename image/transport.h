// One scheme table from references to sources and destinations:
//   docker-daemon:  -> DaemonSource / DaemonDestination   (daemon_transport.h)
//   oci:            -> OciSource / OciDestination         (oci_layout.h)
//   docker://       -> DockerSource / DockerDestination   (docker_transport.h), on the operation's
//                      registry session: one client per host (registry_session.h)
#pragma once
#include <memory>

#include "image/daemon_transport.h"
#include "image/image.h"
#include "image/reference.h"
#include "image/registry.h"
#include "image/registry_repository.h"
#include "image/registry_session.h"

namespace imgtool::image {

struct TransportOptions {
  RegistryOptions registry;  // docker://: TLS, http, credentials, retries
  DaemonOptions daemon;      // docker-daemon:: compression, threads, layer cache
  // docker://: this operation's registry clients, one per host; copies of these options share it.
  std::shared_ptr<RegistrySession> session = std::make_shared<RegistrySession>();
};

// The registry client for `host` in this operation (o.session; made with o.registry the first time).
std::shared_ptr<Registry> registry_for(const std::string& host, const TransportOptions& o);
// The registry repository `r` names (docker:// only, else InputError), on that client.
std::unique_ptr<RegistryRepository> open_repository(const Reference& r, const TransportOptions& o);

std::unique_ptr<ImageSource> open_source(const Reference& ref, const TransportOptions& o = {});
std::unique_ptr<ImageDestination> open_destination(const Reference& ref, const TransportOptions& o = {});
// Convenience: parse_reference() + open_source() (throws InputError on a bad reference).
std::unique_ptr<ImageSource> open_source(const std::string& ref, const TransportOptions& o = {});

}  // namespace imgtool::image
