// Image references "transport:details", the names `imgtool copy` takes:
//   docker-daemon:NAME[:TAG]                the local Docker engine (TAG defaults to latest)
//   oci:DIR[:TAG]                           an OCI image layout folder
//   docker://HOST[:PORT]/REPO[:TAG|@sha256:<hex>]   a registry (TAG defaults to latest)
#pragma once
#include <string>

namespace imgtool::image {

struct Reference {
  std::string transport;  // "docker-daemon", "oci", "docker"
  std::string text;       // as written
  std::string name;       // docker-daemon: NAME; docker: REPO; oci: DIR
  std::string host;       // docker: HOST[:PORT]
  std::string tag;        // may be empty for oci: and when a digest is given
  std::string digest;     // docker: "sha256:<hex>" when given
  // docker: "REPO:TAG" or "REPO@digest"; docker-daemon: "NAME:TAG"; oci: "DIR:TAG".
  std::string display() const { return text; }
};

// Parses a reference; throws imgtool::InputError with a one-line message
// ("bad image reference 'X': expected ..., found ...").
Reference parse_reference(const std::string& text);

}  // namespace imgtool::image
