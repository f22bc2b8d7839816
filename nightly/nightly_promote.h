// `imgtool nightly promote --from-report DIR --sign-key K`: the release step of the scale-out path.
// Every cell a staged nightly published (`nightly --stage-repository`: its report names the release
// registry and, per cell, the staged digest) is promoted into the release registry with
// release::promote (release/promote.h): copied by digest, its signature and SBOM checked, its
// contents gated again, and -- for a gpu cell -- its hardware evidence required (the smoke Jobs'
// results, attested by `nightly collect --key`), then attested and signed with the release key and
// tagged. A cell that is refused keeps its release tag where it was; the others still go.
#pragma once
#include <openssl/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "image/transport.h"
#include "matrix/kb.h"
#include "sign/policy.h"

namespace imgtool::nightly {

struct ReportPromoteOptions {
  std::filesystem::path from_report;  // a staged nightly's report folder
  EVP_PKEY* public_key = nullptr;     // what the staged digests are signed with
  EVP_PKEY* sign_key = nullptr;       // the release key
  const matrix::KnowledgeBase* kb = nullptr;
  image::TransportOptions transport;  // TLS/http for the registries, and the command's registry session
  // The trust policy (sign/policy.h), the one verify, promote and select read; e.g. without
  // hardware_evidence gpu cells go without it, the override recorded on each one's release
  // signature (verify shows it).
  sign::Policy policy;
};

struct PromotedCell {
  std::string tag, from, to;  // staged REPO@digest, release REPO:TAG
  bool ok = false;
  std::string line;  // what happened (the evidence summary, or why it was refused)
};

// InputError when the report is not a staged nightly's.
std::vector<PromotedCell> promote_report(const ReportPromoteOptions& o);

}  // namespace imgtool::nightly
