// The trust policy: what a published image must carry before imgtool vouches for it. ONE struct
// with ONE set of defaults, read by `verify`, `promote`, `select` and `nightly promote` (issue 34
// item 5), so the four cannot disagree about what "trusted" means. It lives beside the signatures
// (containers/image keeps its policy.json model in its signature package for the same reason);
// verify/ applies it to an image (verify/verify_image.h; the hardware part is
// verify/evidence_check.h's judge_hardware), release/promote.h and host/registry_candidates.h call that.
//
//   identity_rule  exact: a tag reference needs a signature for exactly REGISTRY/REPO:TAG, a digest
//                  reference one for the repository (sign::required_identity); any_tag_of_repository
//                  widens a tag to the repository. `identity` fixes the docker-reference instead.
//   sbom           the signed SPDX attestation of the digest must be there (and, where the layers are
//                  read, match them).
//   hardware_evidence  a gpu-labelled image needs a signed smoke attestation saying a real GPU of an
//                  architecture its code runs on ran it and it passed (verify/evidence_check.h), or a
//                  signed override (promote --allow-without-gpu-smoke writes one on the signature).
//   require_gpu    compute capabilities ("sm_80", "sm_90") each needing its own bound hardware pass.
//   contents       the release gate: the image's claims (labels, tag) against what its layers hold.
//
// The defaults are the strict ones; every relaxation is a named flag (cli/policy_flags.h) or a
// field of a policy file (read_policy), and reports say which policy judged them (describe).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace imgtool::sign {

enum class IdentityRule { exact, any_tag_of_repository };

struct Policy {
  IdentityRule identity_rule = IdentityRule::exact;
  std::string identity;  // a fixed signed docker-reference; "" = by identity_rule
  bool sbom = true;
  bool hardware_evidence = true;
  std::vector<std::string> require_gpu;
  bool contents = true;

  // The docker-reference a signature must name for REGISTRY/REPO (`repository`) referenced with
  // `tag` ("" for a reference by digest).
  std::string required_identity(const std::string& repository, const std::string& tag) const;
};

// One line: "identity exact tag, SBOM, hardware evidence, contents gate" (what is NOT required says
// so: "no SBOM required").
std::string describe(const Policy& p);

// A policy file (JSON, at most 64 KiB): {"identity": "exact" | "any-tag-of-repository" |
// "REGISTRY/REPO[:TAG]", "sbom": bool, "hardware_evidence": bool, "require_gpu": ["sm_90"],
// "contents": bool}; fields left out keep the defaults. InputError (file: field, expected, found)
// for anything else, unknown fields included.
Policy read_policy(const std::filesystem::path& file);
Policy parse_policy(const std::string& text, const std::string& where);

}  // namespace imgtool::sign
