// `imgtool verify`, one call: signature -> claims vs contents -> SBOM -> GPU smoke, in that order,
// into one Report. The CLI, the nightly's consumers and the tests call this; nothing is assembled
// by the caller.
//
//   Report r = verify_image({.ref = "docker://reg/ai/paddle:3.3.1-cpu", .public_key = pub.get(), …});
//
// Order and trust (each part is skipped, with a row saying why, when an earlier one failed):
//   1. the tag's manifest is read once to pin its digest (an index: its linux/amd64 image,
//      image/platform.h), and everything after is read by that digest, hash-checked; the signature
//      is checked on that digest (static_checks.h);
//   2. the layers are scanned once the signature holds: the claims, the loader rows, and -- for a
//      registry image with SBOM rows wanted -- the SBOM inventory, in the same scan;
//   3. the SBOM rows (sbom_check.h): the signed SPDX attestation of that digest vs the inventory;
//   4. the hardware evidence (evidence_check.h): the signed smoke attestation of that digest, and
//      whether a gpu image's GPU part ever ran on a GPU (a failure under the default policy);
//   5. the GPU smoke (verify_smoke.h): never run when the signature row failed.
#pragma once
#include <openssl/types.h>

#include <string>

#include "image/transport.h"
#include "matrix/kb.h"
#include "sign/policy.h"
#include "verify/report_model.h"
#include "verify/verify_smoke.h"

namespace imgtool::verify {

struct VerifyRequest {
  std::string ref;                      // docker://…, oci:DIR:TAG, docker-daemon:NAME:TAG
  image::TransportOptions transport;    // registry TLS/auth options
  EVP_PKEY* public_key = nullptr;       // required when `signature`
  std::string key_name;                 // the key's file name, for messages
  bool signature = true, smoke = true;  // the signature row; the GPU smoke part (runs the image)
  // The trust policy (sign/policy.h), the same one promote, select and nightly promote read: the
  // signed identity (exactly REGISTRY/REPO:TAG for a tag by default), the SBOM rows (`sbom`), a gpu
  // image's hardware evidence (`hardware_evidence`: fail without it unless its signature records
  // promote's override), and claims vs contents (`contents`).
  sign::Policy policy;
  VerifySmokeOptions smoke_options;           // the smoke part (gpus, shm, profile flags, records, engine)
  const matrix::KnowledgeBase* kb = nullptr;  // required when policy.contents
};

// InputError for a bad request (an unparsable reference, no key when the signature is wanted, no
// KB when the claims are); every failure of the image itself is a row.
Report verify_image(const VerifyRequest& req);

}  // namespace imgtool::verify
