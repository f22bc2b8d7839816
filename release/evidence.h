// Attesting a smoke's hardware evidence (smoke/evidence.h) for a digest already in a repository:
// `imgtool smoke IMAGE --attest docker://HOST/REPO@sha256:…` and `imgtool nightly collect --key` (the
// result of a Kubernetes smoke Job). The nightly's own publish attests it inside release::publish.
//
// What was smoked is what is attested: the digest's config (its image ID) must be `smoked_image_id`,
// the image the probe ran in; otherwise nothing is written (CheckFailed naming both).
#pragma once
#include <openssl/types.h>

#include <string>

#include "image/repository.h"
#include "sign/attestation.h"
#include "smoke/evidence.h"

namespace imgtool::release {

sign::AttestResult attest_evidence(image::Repository& repo, EVP_PKEY& key, const std::string& digest,
                                   const std::string& smoked_image_id, const smoke::SmokeEvidence& e,
                                   smoke::SmokeEvidence* signed_evidence = nullptr);
// `signed_evidence`: set to what was signed (stamped with the image ID and imgtool's clock), so a
// report can show the attestation as it is, not the evidence before it was stamped.

}  // namespace imgtool::release
