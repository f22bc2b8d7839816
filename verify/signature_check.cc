#include "verify/signature_check.h"

#include "sign/check_signature.h"

namespace imgtool::verify {

namespace {

std::string signature_fix(const sign::SignatureCheck& c) {
  if (c.layers == 0) return "sign it: imgtool sign <ref> --key <private key> (or publish through the pipeline)";
  if (c.other_identity)
    return "the digest is signed for another tag: sign this tag (imgtool sign <ref> --key <private key>, or promote "
           "--sign-key), verify it by digest, or pass --any-tag-of-repository to accept any tag of the repository";
  return "check that the right public key is used; re-sign the digest if the image was rebuilt or the signature "
         "was altered";
}

}  // namespace

CheckResult signature_result(image::Repository& repo, const std::string& digest, EVP_PKEY& key,
                             const std::string& key_name, const std::string& identity) {
  sign::SignatureCheck c = sign::check_signature(repo, digest, key, identity);
  CheckResult r{"signature",
                "signed by the given key for this digest and identity",
                c.ok ? Status::kPass : Status::kFail,
                "a valid cosign signature by " + key_name + " for " + digest +
                    (identity.empty() ? "" : " and identity " + identity),
                c.summary(),
                ""};
  if (!c.ok) r.fix = signature_fix(c);
  return r;
}

}  // namespace imgtool::verify
