// The "signature" row of a verify report: sign::check_signature() as a
// CheckResult with expected/found/fix.
#pragma once
#include <openssl/types.h>

#include "image/repository.h"
#include "verify/report_model.h"

namespace imgtool::verify {

CheckResult signature_result(image::Repository& repo, const std::string& digest, EVP_PKEY& public_key,
                             const std::string& key_name, const std::string& identity);

}  // namespace imgtool::verify
