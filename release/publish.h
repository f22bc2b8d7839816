// Publication: an image that passed (smoke and release gate) goes into a registry repository, and a
// tag only ever names a complete, signed, attested image.
//
//   PublishResult r = publish(repo, key, {.image = &src, .image_id = id, .tag = "3.3.1-cpu",
//                                         .inventory = &gate.inventory.value()});
//
// Order (each step completes before the next starts):
//   1. blobs, then the manifest, stored BY DIGEST (no tag) through the copy engine; the stored
//      manifest is read back by digest and its config must be `image_id` (what was smoked and gated);
//   2. the digest is signed (`sha256-<hex>.sig`) and the signature re-checked with the key's public
//      half (guards against a racing writer of .sig);
//   3. the SPDX SBOM is attested for the digest (`sha256-<hex>.att`): built from the inventory of
//      the gate's own scan -- the image is not downloaded again and not scanned a second time; with
//      no inventory, from the layers of the local `image` (still no download);
//   4. the smoke's hardware evidence (smoke/evidence.h), when given, is attested for the digest;
//   5. only then the manifest is PUT under the tag.
// A process killed anywhere before 5 leaves the tag where it was; killed during 4, the registry
// applies the PUT whole or not at all. Re-running is safe: blobs are skipped, an equal signature or
// attestation is not duplicated.
#pragma once
#include <openssl/types.h>

#include <map>
#include <string>
#include <vector>

#include "image/image.h"
#include "image/repository.h"
#include "sbom/inventory.h"
#include "smoke/evidence.h"

namespace imgtool::release {

struct PublishRequest {
  image::ImageSource* image = nullptr;             // required: the image that passed (the engine's, by ID)
  std::string image_id;                            // its config digest; "" = not checked
  std::string tag;                                 // required
  std::string identity;                            // signed docker-reference; default repo.name() + ":" + tag
  std::map<std::string, std::string> annotations;  // signed payload "optional"
  bool attest_sbom = true;
  const sbom::Inventory* inventory = nullptr;      // the gate's scan of the same image
  const smoke::SmokeEvidence* evidence = nullptr;  // how it was smoked: attested before the tag moves
};

struct PublishResult {
  std::string digest;         // manifest digest now under the tag
  std::string signature_tag;  // sha256-<hex>.sig
  bool already_signed = false;
  std::vector<image::Descriptor> layers;        // of the stored manifest
  std::map<std::string, std::string> packages;  // of the attested SBOM (sbom::package_versions)
  int64_t bytes_uploaded = 0;
};

// InputError for a bad request (no image, a bad tag); CheckFailed or Error when a step fails (the
// tag has not moved).
PublishResult publish(image::Repository& repo, EVP_PKEY& key, const PublishRequest& req);

// A tag name as the OCI distribution spec allows ([A-Za-z0-9_][A-Za-z0-9._-]{0,127}); InputError naming it otherwise.
void require_tag(const std::string& tag);

// The manifest stored under `digest`, read once; everything after (signature, gate, the tag PUT)
// uses these bytes, so they must hash to `digest` whatever the repository checks. CheckFailed.
image::Manifest stored_manifest(image::Repository& repo, const std::string& digest);

}  // namespace imgtool::release
