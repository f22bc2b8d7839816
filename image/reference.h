// Image references "transport:details", the names `imgtool copy` takes:
//   docker-daemon:NAME[:TAG]                the local Docker engine (TAG defaults to latest)
//   oci:DIR[:TAG]                           an OCI image layout folder
//   docker://HOST[:PORT]/REPO[:TAG|@sha256:<hex>]   a registry (TAG defaults to latest)
#pragma once
#include <optional>
#include <string>

namespace imgtool::image {

// Where a reference points: a registry (docker://), the local engine (docker-daemon:), an OCI layout
// folder (oci:). A type, never compared as a string; transport_name() gives the scheme's word.
enum class Transport { docker, docker_daemon, oci };
std::string transport_name(Transport t);  // "docker", "docker-daemon", "oci"

// Like go-containerregistry's name.Reference: parsed once, then derived (with_digest, with_tag) and
// printed (str) from its parts, never re-assembled by string concatenation.
struct Reference {
  Transport transport = Transport::docker;
  std::string text;          // as written (a derived reference: its str())
  std::string name;          // docker-daemon: NAME; docker: REPO; oci: DIR
  std::string host;          // docker: HOST[:PORT]
  std::string tag;           // may be empty for oci: and when a digest is given
  std::string digest;        // docker: "sha256:<hex>" when given
  bool default_tag = false;  // tag is the "latest" parse_reference filled in, not written
  // docker: "REPO:TAG" or "REPO@digest"; docker-daemon: "NAME:TAG"; oci: "DIR:TAG".
  std::string display() const { return text; }

  // docker: "HOST/REPO" (what signatures name, cosign's identity); the others: name.
  std::string repository() const;
  // True when written without a tag or digest ("docker://HOST/REPO"): a whole repository.
  bool is_repository() const { return digest.empty() && (tag.empty() || default_tag); }
  // The same repository by digest (the tag dropped), or by tag (the digest dropped). InputError for
  // a digest that is not sha256:<64 hex>, a bad tag, or a digest on a transport that takes none.
  Reference with_digest(const std::string& digest) const;
  Reference with_tag(const std::string& tag) const;
  // docker: the repository `path` below this one's name ("HOST/ai" + "paddle" -> "HOST/ai/paddle"),
  // without tag or digest, as a namespace publishes a cell's repository. InputError for a path that
  // is not a lower-case repository path, or on another transport.
  Reference under(const std::string& path) const;
  // under()'s inverse: this reference's repository path below namespace `ns` ("imgtool-it/paddle" of
  // HOST/staging/imgtool-it/paddle below HOST/staging); nothing when it is not in it.
  std::optional<std::string> below(const Reference& ns) const;
  // Canonical text without the transport ("HOST/REPO:TAG", "HOST/REPO@sha256:…", "NAME:TAG",
  // "DIR[:TAG]"), as containers/image's StringWithinTransport; and with it ("docker://HOST/REPO@sha256:…"),
  // which parse_reference reads back to the same reference.
  std::string within_transport() const;
  std::string str() const;
};

// Parses a reference; throws imgtool::InputError with a one-line message
// ("bad image reference 'X': expected ..., found ...").
Reference parse_reference(const std::string& text);
// A registry reference written without its scheme ("HOST[:PORT]/REPO[:TAG|@sha256:…]", as reports and
// CI variables hold one): the docker:// reference it names. InputError as parse_reference.
Reference parse_docker_reference(const std::string& text);
// Docker Hub: the names it goes by in image names and credentials ("docker.io", "index.docker.io")
// and the API host that serves them (kDockerHubApi).
inline constexpr const char* kDockerHubApi = "registry-1.docker.io";
bool is_docker_hub(const std::string& host);
// A name as the engine reads it in FROM or `docker pull` ("nvidia/cuda:12.6.3-…", "debian:12",
// "HOST:PORT/REPO:TAG", "NAME@sha256:…"): the registry reference it means, with Docker's defaults
// (distribution/reference's ParseNormalizedNamed): a first part that is no domain (refname.h) means
// Docker Hub, whose API host is registry-1.docker.io, where a one-part path is under library/; no
// tag means latest. InputError for a name Docker would refuse.
Reference parse_engine_name(const std::string& name);
// A registry namespace to publish into: "HOST[:PORT][/NS…]" (docker:// and trailing slashes allowed),
// a docker:// reference whose name is the namespace ("" = the registry's root), no tag. InputError
// without a valid host, or with a namespace that is not a lower-case path.
Reference parse_namespace(const std::string& text);

}  // namespace imgtool::image
