// One scheme table from references to sources and destinations:
//   docker-daemon:  -> DaemonSource / DaemonDestination   (daemon_transport.h)
//   oci:            -> OciSource / OciDestination         (oci_layout.h)
//   docker://       -> DockerSource / DockerDestination   (docker_transport.h)
#pragma once
#include <memory>

#include "image/daemon_transport.h"
#include "image/image.h"
#include "image/reference.h"
#include "image/registry.h"

namespace imgtool::image {

struct TransportOptions {
  RegistryOptions registry;  // docker://: TLS, http, credentials, retries
  DaemonOptions daemon;      // docker-daemon:: compression, threads, layer cache
};

std::unique_ptr<ImageSource> open_source(const Reference& ref, const TransportOptions& o = {});
std::unique_ptr<ImageDestination> open_destination(const Reference& ref, const TransportOptions& o = {});
// Convenience: parse_reference() + open_source() (throws InputError on a bad reference).
std::unique_ptr<ImageSource> open_source(const std::string& ref, const TransportOptions& o = {});

}  // namespace imgtool::image
