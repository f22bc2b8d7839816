#include "image/transport.h"

#include <functional>
#include <vector>

#include "image/docker_transport.h"
#include "image/oci_layout.h"

namespace imgtool::image {
namespace {

struct TransportEntry {
  image::Transport transport;
  std::function<std::unique_ptr<ImageSource>(const Reference&, const TransportOptions&)> source;
  std::function<std::unique_ptr<ImageDestination>(const Reference&, const TransportOptions&)> destination;
};

std::string daemon_name(const Reference& r) { return r.within_transport(); }  // NAME:TAG

const std::vector<TransportEntry>& transports() {
  static const std::vector<TransportEntry> table = {
      {Transport::docker_daemon,
       [](const Reference& r, const TransportOptions& o) {
         return std::make_unique<DaemonSource>(daemon_name(r), o.daemon);
       },
       [](const Reference& r, const TransportOptions& o) {
         return std::make_unique<DaemonDestination>(daemon_name(r), o.daemon);
       }},
      {Transport::oci,
       [](const Reference& r, const TransportOptions&) { return std::make_unique<OciSource>(r.name, r.tag); },
       [](const Reference& r, const TransportOptions&) { return std::make_unique<OciDestination>(r.name); }},
      {Transport::docker,
       [](const Reference& r, const TransportOptions& o) {
         return std::make_unique<DockerSource>(registry_for(r.host, o), r.name, r.digest.empty() ? r.tag : r.digest);
       },
       [](const Reference& r, const TransportOptions& o) {
         return std::make_unique<DockerDestination>(registry_for(r.host, o), r.name);
       }},
  };
  return table;
}

const TransportEntry& find(const Reference& r) {
  for (auto& t : transports())
    if (r.transport == t.transport) return t;
  throw InputError("unknown transport '" + transport_name(r.transport) + "'");
}

}  // namespace

std::shared_ptr<Registry> registry_for(const std::string& host, const TransportOptions& o) {
  return o.session ? o.session->registry(host, o.registry) : std::make_shared<Registry>(host, o.registry);
}

std::unique_ptr<RegistryRepository> open_repository(const Reference& r, const TransportOptions& o) {
  if (r.transport != Transport::docker)
    throw InputError("expected a registry reference docker://HOST/REPO, found '" + r.str() + "'");
  return std::make_unique<RegistryRepository>(registry_for(r.host, o), r.name);
}

std::unique_ptr<ImageSource> open_source(const Reference& ref, const TransportOptions& o) {
  return find(ref).source(ref, o);
}

std::unique_ptr<ImageDestination> open_destination(const Reference& ref, const TransportOptions& o) {
  return find(ref).destination(ref, o);
}

std::unique_ptr<ImageSource> open_source(const std::string& ref, const TransportOptions& o) {
  return open_source(parse_reference(ref), o);
}

}  // namespace imgtool::image
