// The trust policy's flags (sign/policy.h), one set for verify, promote, select and nightly promote,
// so the four read one policy with one set of defaults: strict, relaxed only by name.
//   --policy FILE               a policy file (JSON, sign::read_policy); the flags below apply on top
//   --identity REF              the signed docker-reference required
//   --any-tag-of-repository     a tag reference accepts a signature for any tag of the repository
//   --no-sbom                   no signed SPDX attestation required
//   --allow-without-gpu-smoke   gpu images without hardware evidence (promote records the override)
//   --require-gpu sm_80,sm_90   a bound hardware pass from a device of each
//   --no-contents               no claims vs contents gate (also spelled --no-claims, --no-verify-contents)
// (header-only, as cli/sign_common.h)
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "sign/policy.h"

namespace imgtool::cli {

struct PolicyFlags {
  std::string file, identity;
  bool any_tag = false, no_sbom = false, allow_without_gpu_smoke = false, no_contents = false;
  std::vector<std::string> require_gpu;

  // `contents`: whether the command has a contents gate to switch off (select reads no layers).
  void add(CLI::App& sub, bool contents = true) {
    sub.add_option("--policy", file,
                   "a trust policy file (JSON: identity, sbom, hardware_evidence, require_gpu, contents); "
                   "the flags below apply on top of it");
    auto* id = sub.add_option("--identity", identity,
                              "required signed docker-reference (default: exactly REGISTRY/REPO:TAG for a tag, "
                              "REGISTRY/REPO for a digest)");
    sub.add_flag("--any-tag-of-repository", any_tag,
                 "accept a signature made for any tag of the repository (default: the exact tag)")
        ->excludes(id);
    sub.add_flag("--no-sbom", no_sbom, "do not require the signed SPDX SBOM attestation (sha256-<hex>.att)");
    sub.add_flag("--allow-without-gpu-smoke", allow_without_gpu_smoke,
                 "accept a gpu image without hardware evidence (a signed smoke attestation from a real GPU "
                 "that passed); promote records the override on the signature it writes (needs --sign-key)");
    sub.add_option("--require-gpu", require_gpu,
                   "compute capabilities (sm_80,sm_90) each needing its own bound hardware pass: the newest "
                   "smoke attestation from a device of each must be one")
        ->delimiter(',');
    if (contents)
      sub.add_flag("--no-contents,--no-claims,--no-verify-contents", no_contents,
                   "skip the claims vs contents gate (labels and tag against what the layers hold)");
  }

  sign::Policy policy() const {
    sign::Policy p = file.empty() ? sign::Policy{} : sign::read_policy(file);
    if (!identity.empty()) p.identity = identity;
    if (any_tag) p.identity_rule = sign::IdentityRule::any_tag_of_repository;
    if (no_sbom) p.sbom = false;
    if (allow_without_gpu_smoke) p.hardware_evidence = false;
    if (no_contents) p.contents = false;
    p.require_gpu.insert(p.require_gpu.end(), require_gpu.begin(), require_gpu.end());
    return p;
  }
};

}  // namespace imgtool::cli
