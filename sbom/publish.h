// The SBOM of an image, and its attestation in a registry repository (cosign format,
// sign/attestation.h: `sha256-<hex>.att`, predicate type https://spdx.dev/Document, DSSE-signed with
// the release key). release/publish.h attests it after the image is signed and BEFORE the tag
// moves, so no tag points at an image without its SBOM.
#pragma once
#include <openssl/types.h>

#include <map>
#include <memory>
#include <string>

#include "image/image.h"
#include "image/repository.h"
#include "sbom/build.h"
#include "sbom/inventory.h"
#include "sign/attestation.h"

namespace imgtool::sbom {

// Reads the config of `m` and streams its layers once from `src`; the SBOM
// names the image `name` at `digest`.
Document sbom_of(image::ImageSource& src, const image::Manifest& m, const std::string& name, const std::string& digest,
                 const SbomOptions& opt = {});
// The same from the inventory of a scan already made (verify's: gather_inventory
// of its tree); only the config is read from `src`.
Document sbom_of(const Inventory& inv, image::ImageSource& src, const image::Manifest& m, const std::string& name,
                 const std::string& digest, const SbomOptions& opt = {});

// Builds the SBOM of `m` (layers from `src`, which must serve m's blobs) and
// attaches it for m's digest in `repo`, signed with `private_key`.
sign::AttestResult attest_sbom(image::Repository& repo, image::ImageSource& src, const image::Manifest& m,
                               EVP_PKEY& private_key, const SbomOptions& opt = {});

// "<purl type>/<name>" -> version for every package of `doc` with a purl (the
// image itself excluded; NVIDIA libraries as "nvidia/<name>"): what the nightly
// compares between runs.
std::map<std::string, std::string> package_versions(const Document& doc);

}  // namespace imgtool::sbom
