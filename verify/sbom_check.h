// The SBOM rows of `imgtool verify` (registry images): the cosign-format SPDX
// attestation of the ONE manifest digest being verified.
//   sbom.attestation  `sha256-<hex>.att` holds an in-toto SPDX statement whose
//                     DSSE signature verifies with --key and whose subject is
//                     that digest (sign::check_attestation);
//   sbom.document     the predicate has what SPDX 2.3 requires (sbom::check_required);
//   sbom.packages     its packages equal those a scan of the image's layers
//                     finds (sbom/compare.h), naming the differences.
// The layers are scanned only once the attestation verifies (as the claims
// are only scanned once the image signature holds).
#pragma once
#include <openssl/types.h>

#include <vector>

#include "image/image.h"
#include "image/repository.h"
#include "sbom/inventory.h"
#include "verify/report_model.h"

namespace imgtool::verify {

// `src` serves the blobs of `m` (the manifest read once for this verification);
// never throws for a missing, forged or mismatched SBOM (a failed row says so).
// `scanned`: the inventory of the layers when a scan already gathered it
// (the claims scan of check_static: StaticResult::inventory); nullptr: the layers are read here.
std::vector<CheckResult> sbom_rows(image::Repository& repo, image::ImageSource& src, const image::Manifest& m,
                                   EVP_PKEY& public_key, const std::string& key_name,
                                   const sbom::Inventory* scanned = nullptr);

// The same, appended to `report` unless its "signature" row failed (then one
// skipped row: an unsigned image's layers are not parsed).
void add_sbom_rows(Report& report, image::Repository& repo, image::ImageSource& src, const image::Manifest& m,
                   EVP_PKEY& public_key, const std::string& key_name, const sbom::Inventory* scanned = nullptr);

}  // namespace imgtool::verify
