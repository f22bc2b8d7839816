#include "release/evidence.h"

#include "core/error.h"
#include "release/publish.h"

namespace imgtool::release {

sign::AttestResult attest_evidence(image::Repository& repo, EVP_PKEY& key, const std::string& digest,
                                   const std::string& smoked_image_id, const smoke::SmokeEvidence& e,
                                   smoke::SmokeEvidence* signed_evidence) {
  if (smoked_image_id.empty())
    throw CheckFailed(repo.name() + "@" + digest +
                      ": refusing to attest: no image ID says which image was smoked (nothing to compare)");
  image::Manifest m = stored_manifest(repo, digest);
  if (m.config().digest != smoked_image_id)
    throw CheckFailed(repo.name() + "@" + digest + ": refusing to attest: its config " + m.config().digest +
                      " is not the image that was smoked, " + smoked_image_id);
  smoke::SmokeEvidence s = smoke::stamped(e, smoked_image_id);
  auto r =
      sign::attach_attestation(repo, key, {digest, repo.name(), smoke::kSmokePredicateType, smoke::to_predicate(s)});
  if (signed_evidence) *signed_evidence = s;
  return r;
}

}  // namespace imgtool::release
