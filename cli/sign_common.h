// Flags and helpers shared by keygen / sign / verify / promote (header-only;
// the cmd_*.cc files stay thin).
#pragma once
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "core/error.h"
#include "image/reference.h"
#include "image/registry.h"
#include "image/transport.h"

namespace imgtool::cli {

// --ca-file and --insecure-http, and the command's one registry session: every registry client a
// command uses comes from here (registry(), repository(), transport()), one per host.
struct RegistryFlags {
  std::string ca_file;
  bool insecure_http = false;
  std::shared_ptr<image::RegistrySession> session = std::make_shared<image::RegistrySession>();
  void add(CLI::App& sub) {
    sub.add_option("--ca-file", ca_file, "CA certificate (PEM) to trust for the registry");
    sub.add_flag("--insecure-http", insecure_http, "allow plain http to a non-loopback registry");
  }
  image::RegistryOptions options() const {
    image::RegistryOptions o;
    o.ca_file = ca_file;
    o.insecure_http = insecure_http;
    return o;
  }
  image::TransportOptions transport() const {
    image::TransportOptions t;
    t.registry = options();
    t.session = session;
    return t;
  }
  std::shared_ptr<image::Registry> registry(const std::string& host) const {
    return image::registry_for(host, transport());
  }
  std::unique_ptr<image::RegistryRepository> repository(const image::Reference& r) const {
    return image::open_repository(r, transport());
  }
};

// Parses `text` and requires the docker:// transport (signatures live in registries).
inline image::Reference docker_reference(const std::string& text, const std::string& what) {
  image::Reference r = image::parse_reference(text);
  if (r.transport != image::Transport::docker)
    throw InputError(what + ": expected docker://HOST/REPO:TAG or docker://HOST/REPO@sha256:<hex>, found '" + text +
                     "' (signatures are stored in the image's registry repository)");
  return r;
}

}  // namespace imgtool::cli
