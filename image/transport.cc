#include "image/transport.h"

#include <functional>
#include <vector>

#include "image/docker_transport.h"
#include "image/oci_layout.h"

namespace imgtool::image {
namespace {

struct Transport {
  const char* name;
  std::function<std::unique_ptr<ImageSource>(const Reference&, const TransportOptions&)> source;
  std::function<std::unique_ptr<ImageDestination>(const Reference&, const TransportOptions&)> destination;
};

std::string daemon_name(const Reference& r) { return r.within_transport(); }  // NAME:TAG

const std::vector<Transport>& transports() {
  static const std::vector<Transport> table = {
      {"docker-daemon",
       [](const Reference& r, const TransportOptions& o) {
         return std::make_unique<DaemonSource>(daemon_name(r), o.daemon);
       },
       [](const Reference& r, const TransportOptions& o) {
         return std::make_unique<DaemonDestination>(daemon_name(r), o.daemon);
       }},
      {"oci", [](const Reference& r, const TransportOptions&) { return std::make_unique<OciSource>(r.name, r.tag); },
       [](const Reference& r, const TransportOptions&) { return std::make_unique<OciDestination>(r.name); }},
      {"docker",
       [](const Reference& r, const TransportOptions& o) {
         auto reg = std::make_shared<Registry>(r.host, o.registry);
         return std::make_unique<DockerSource>(reg, r.name, r.digest.empty() ? r.tag : r.digest);
       },
       [](const Reference& r, const TransportOptions& o) {
         return std::make_unique<DockerDestination>(std::make_shared<Registry>(r.host, o.registry), r.name);
       }},
  };
  return table;
}

const Transport& find(const Reference& r) {
  for (auto& t : transports())
    if (r.transport == t.name) return t;
  throw InputError("unknown transport '" + r.transport + "'");
}

}  // namespace

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
