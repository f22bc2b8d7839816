#include "image/reference.h"

#include <functional>
#include <map>
#include <vector>

#include "core/error.h"
#include "core/hash.h"
#include "core/refname.h"

namespace imgtool::image {
namespace {

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw InputError("bad image reference '" + text + "': " + why);
}

// Splits "NAME[:TAG][@DIGEST]" where NAME may contain '/' (and a host port before the first '/').
void split_name_tag(const std::string& text, std::string rest, Reference& r) {
  if (auto at = rest.find('@'); at != std::string::npos) {
    r.digest = rest.substr(at + 1);
    rest.resize(at);
    if (!is_sha256_digest(r.digest)) bad(text, "expected @sha256:<64 hex digits>, found '@" + r.digest + "'");
  }
  auto slash = rest.rfind('/');
  auto colon = rest.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    r.tag = rest.substr(colon + 1);
    rest.resize(colon);
    if (!refname::is_tag(r.tag)) bad(text, "expected a tag of [A-Za-z0-9_.-] (max 128), found '" + r.tag + "'");
  }
  r.name = rest;
  if (r.tag.empty() && r.digest.empty()) {
    r.tag = "latest";
    r.default_tag = true;
  }
}

Reference parse_docker(const std::string& text, const std::string& rest) {
  Reference r{Transport::docker, text};
  auto slash = rest.find('/');
  if (slash == std::string::npos) bad(text, "expected docker://HOST[:PORT]/REPO[:TAG], found no '/' after the host");
  r.host = rest.substr(0, slash);
  if (!refname::is_domain(r.host)) bad(text, "expected a registry host[:port], found '" + r.host + "'");
  split_name_tag(text, rest.substr(slash + 1), r);
  if (!refname::is_path(r.name))
    bad(text, "expected a lower-case repository path like ai/paddle, found '" + r.name + "'");
  return r;
}

Reference parse_daemon(const std::string& text, const std::string& rest) {
  Reference r{Transport::docker_daemon, text};
  if (rest.empty()) bad(text, "expected docker-daemon:NAME[:TAG], found an empty name");
  split_name_tag(text, rest, r);
  if (!r.digest.empty()) bad(text, "docker-daemon: takes NAME:TAG, not a digest");
  // The engine would refuse the name later (after a save or a build): refuse it now, the same way.
  if (auto why = refname::check_name(r.name, false)) bad(text, *why);
  return r;
}

Reference parse_oci(const std::string& text, const std::string& rest) {
  Reference r{Transport::oci, text};
  auto colon = rest.rfind(':');
  r.name = rest;
  if (colon != std::string::npos && rest.find('/', colon) == std::string::npos) {
    r.name = rest.substr(0, colon);
    r.tag = rest.substr(colon + 1);
    if (!refname::is_tag(r.tag)) bad(text, "expected oci:DIR[:TAG], found tag '" + r.tag + "'");
  }
  if (r.name.empty()) bad(text, "expected oci:DIR[:TAG], found an empty folder");
  return r;
}

struct Scheme {
  const char* prefix;
  Transport transport;
  std::function<Reference(const std::string&, const std::string&)> parse;
  bool takes_digest;
};

const std::vector<Scheme>& schemes() {
  static const std::vector<Scheme> table = {{"docker://", Transport::docker, parse_docker, true},
                                            {"docker-daemon:", Transport::docker_daemon, parse_daemon, false},
                                            {"oci:", Transport::oci, parse_oci, false}};
  return table;
}

const Scheme& scheme_of(const Reference& r) {
  for (const auto& s : schemes())
    if (r.transport == s.transport) return s;
  throw InputError("unknown transport '" + transport_name(r.transport) + "'");
}

// A derived reference: its text is its canonical form.
Reference derived(Reference r) {
  r.default_tag = false;
  r.text = r.str();
  return r;
}

}  // namespace

std::string transport_name(Transport t) {
  static const std::map<Transport, const char*> kNames = {
      {Transport::docker, "docker"}, {Transport::docker_daemon, "docker-daemon"}, {Transport::oci, "oci"}};
  return kNames.at(t);
}

std::string Reference::repository() const {
  if (transport != Transport::docker) return name;
  return name.empty() ? host : host + "/" + name;  // a namespace at the registry's root: the host alone
}

std::string Reference::within_transport() const {
  return repository() + (tag.empty() ? "" : ":" + tag) + (digest.empty() ? "" : "@" + digest);
}

std::string Reference::str() const { return scheme_of(*this).prefix + within_transport(); }

Reference Reference::with_digest(const std::string& d) const {
  if (!scheme_of(*this).takes_digest)
    bad(str() + "@" + d, transport_name(transport) + ": takes NAME:TAG, not a digest");
  if (!is_sha256_digest(d)) bad(repository() + "@" + d, "expected @sha256:<64 hex digits>, found '@" + d + "'");
  Reference r = *this;
  r.digest = d;
  r.tag.clear();
  return derived(r);
}

Reference Reference::with_tag(const std::string& t) const {
  if (!refname::is_tag(t)) bad(repository() + ":" + t, "expected a tag of [A-Za-z0-9_.-] (max 128), found '" + t + "'");
  Reference r = *this;
  r.tag = t;
  r.digest.clear();
  return derived(r);
}

Reference Reference::under(const std::string& path) const {
  if (transport != Transport::docker) bad(str(), "a repository below it needs a docker:// reference");
  std::string full = name.empty() ? path : name + "/" + path;
  if (!refname::is_path(full))
    bad(repository() + "/" + path, "expected a lower-case repository path, found '" + path + "'");
  Reference r = *this;
  r.name = full;
  r.tag.clear();
  r.digest.clear();
  return derived(r);
}

std::optional<std::string> Reference::below(const Reference& ns) const {
  if (host != ns.host) return std::nullopt;
  if (ns.name.empty()) return name;
  if (name.rfind(ns.name + "/", 0) != 0) return std::nullopt;
  return name.substr(ns.name.size() + 1);
}

Reference parse_docker_reference(const std::string& text) { return parse_docker(text, text); }

bool is_docker_hub(const std::string& host) {
  return host == "docker.io" || host == "index.docker.io" || host == kDockerHubApi;
}

Reference parse_engine_name(const std::string& name) {
  if (auto why = refname::check_name(name, true)) bad(name, *why);
  auto slash = name.find('/');
  std::string first = name.substr(0, slash);
  bool domain = slash != std::string::npos && refname::looks_like_domain(first);
  std::string host = domain && !is_docker_hub(first) ? first : kDockerHubApi;
  std::string path = domain ? name.substr(slash + 1) : name;
  if (host == kDockerHubApi && path.substr(0, path.find_first_of(":@")).find('/') == std::string::npos)
    path = "library/" + path;
  return parse_docker(name, host + "/" + path);
}

Reference parse_namespace(const std::string& text) {
  std::string t = text.rfind("docker://", 0) == 0 ? text.substr(9) : text;
  while (!t.empty() && t.back() == '/') t.pop_back();
  auto slash = t.find('/');
  Reference r{Transport::docker, text};
  r.host = t.substr(0, slash);
  r.name = slash == std::string::npos ? "" : t.substr(slash + 1);
  if (!refname::is_domain(r.host))
    throw InputError("expected HOST[:PORT]/NAMESPACE (e.g. 127.0.0.1:5000/ai), found '" + text + "'");
  if (!r.name.empty() && !refname::is_path(r.name))
    throw InputError("expected HOST[:PORT]/NAMESPACE with a lower-case namespace path, found '" + text + "'");
  return derived(r);
}

Reference parse_reference(const std::string& text) {
  for (const auto& s : schemes()) {
    std::string p = s.prefix;
    if (text.rfind(p, 0) == 0) return s.parse(text, text.substr(p.size()));
  }
  bad(text, "expected a transport prefix docker://, docker-daemon: or oci:");
}

}  // namespace imgtool::image
