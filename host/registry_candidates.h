// A registry repository's tags as select candidates: each tag's labels read
// back into a matrix::Cell, kept only when its cosign signature verifies with
// the key (sign::check_signature) for exactly REGISTRY/REPO:TAG (or, with
// `any_tag_of_repository`, for any tag of the repository); unsigned, wrongly
// signed, signed-for-another-tag or unlabelled tags are refused with the
// reason. Signature tags (sha256-….sig) are not candidates. Each kept tag's
// digest is the one its manifest was read (and its signature checked) at.
#pragma once
#include <openssl/types.h>

#include <string>
#include <vector>

#include "host/select.h"
#include "image/registry.h"
#include "image/transport.h"

namespace imgtool::host {

struct RegistryCandidates {
  std::string repository;  // HOST/REPO
  std::vector<matrix::Cell> cells;
  std::vector<PassedOver> refused;
  std::map<std::string, std::string> digests;    // kept tag -> the digest whose signature verified
  std::map<std::string, std::string> platforms;  // kept tag -> its config's "os/architecture" ("linux/arm64")
};

// `repository` is "docker://HOST/REPO" (no tag). Throws InputError for another form.
RegistryCandidates read_repository(const std::string& repository, EVP_PKEY& key, const matrix::KnowledgeBase& kb,
                                   const image::TransportOptions& opt = {}, bool any_tag_of_repository = false);

// The cell a set of io.imgtool.* labels describes (tag from the registry).
matrix::Cell cell_from_labels(const std::string& tag, const std::map<std::string, std::string>& labels,
                              const matrix::KnowledgeBase& kb);

}  // namespace imgtool::host
