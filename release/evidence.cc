#include "release/evidence.h"

#include "core/error.h"
#include "release/publish.h"

namespace imgtool::release {

sign::AttestResult attest_evidence(image::Repository& repo, EVP_PKEY& key, const std::string& digest,
                                   const std::string& smoked_image_id, const smoke::SmokeEvidence& e) {
  if (smoked_image_id.empty())
    throw CheckFailed(repo.name() + "@" + digest +
                      ": refusing to attest: no image ID says which image was smoked (nothing to compare)");
  image::Manifest m = stored_manifest(repo, digest);
  if (m.config().digest != smoked_image_id)
    throw CheckFailed(repo.name() + "@" + digest + ": refusing to attest: its config " + m.config().digest +
                      " is not the image that was smoked, " + smoked_image_id);
  return sign::attach_attestation(
      repo, key,
      {digest, repo.name(), smoke::kSmokePredicateType, smoke::to_predicate(smoke::stamped(e, smoked_image_id))});
}

}  // namespace imgtool::release
