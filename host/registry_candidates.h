// A registry repository's tags as select candidates: each tag's labels read
// back into a matrix::Cell, kept only when the trust policy (sign/policy.h, the
// one verify and promote read) holds without reading the layers: its cosign
// signature verifies with the key for the policy's identity (exactly
// REGISTRY/REPO:TAG by default), its SBOM attestation is there, and a gpu tag
// has hardware evidence (verify/evidence_check.h; promote's override on the
// signature is not enough: --allow-without-gpu-smoke relaxes select's own policy). Unsigned, wrongly signed,
// signed-for-another-tag, unattested, never-on-hardware or unlabelled tags are refused with the reason. Signature tags
// (sha256-….sig) are not candidates. Each kept tag's digest is the one its manifest was read (and its signature
// checked) at.
#pragma once
#include <openssl/types.h>

#include <string>
#include <vector>

#include "host/select.h"
#include "image/registry.h"
#include "image/transport.h"
#include "sign/policy.h"

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
                                   const image::TransportOptions& opt = {}, const sign::Policy& policy = {});

// The cell a set of io.imgtool.* labels describes (tag from the registry).
matrix::Cell cell_from_labels(const std::string& tag, const std::map<std::string, std::string>& labels,
                              const matrix::KnowledgeBase& kb);

}  // namespace imgtool::host
