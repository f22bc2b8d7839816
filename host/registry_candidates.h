// A registry repository's tags as select candidates: each tag's labels read
// back into a matrix::Cell, kept only when its cosign signature verifies with
// the key (sign::check_signature, identity = the repository); unsigned, wrongly
// signed or unlabelled tags are refused with the reason. Signature tags
// (sha256-….sig) are not candidates.
#pragma once
#include <openssl/types.h>

#include <string>
#include <vector>

#include "host/select.h"
#include "image/registry.h"

namespace imgtool::host {

struct RegistryCandidates {
  std::vector<matrix::Cell> cells;
  std::vector<PassedOver> refused;
};

// `repository` is "docker://HOST/REPO" (no tag). Throws InputError for another form.
RegistryCandidates read_repository(const std::string& repository, EVP_PKEY& key, const matrix::KnowledgeBase& kb,
                                   const image::RegistryOptions& opt = {});

// The cell a set of io.imgtool.* labels describes (tag from the registry).
matrix::Cell cell_from_labels(const std::string& tag, const std::map<std::string, std::string>& labels, const matrix::KnowledgeBase& kb);

}  // namespace imgtool::host
