#include "verify/signature_check.h"

#include "sign/check_signature.h"

namespace imgtool::verify {

CheckResult signature_result(image::Repository& repo, const std::string& digest, EVP_PKEY& key,
                             const std::string& key_name, const std::string& identity) {
  sign::SignatureCheck c = sign::check_signature(repo, digest, key, identity);
  CheckResult r{"signature", "signed by the given key for this digest and identity",
                c.ok ? Status::kPass : Status::kFail,
                "a valid cosign signature by " + key_name + " for " + digest +
                    (identity.empty() ? "" : " and identity " + identity),
                c.summary(), ""};
  if (!c.ok)
    r.fix = c.layers == 0 ? "sign it: imgtool sign <ref> --key <private key> (or publish through the pipeline)"
                          : "check that the right public key is used; re-sign the digest if the image was rebuilt "
                            "or the signature was altered";
  return r;
}

}  // namespace imgtool::verify
