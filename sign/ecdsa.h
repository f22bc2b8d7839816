// ECDSA P-256 / SHA-256 signatures in the encoding cosign uses: ASN.1 DER,
// carried as standard base64 with padding.
#pragma once
#include <openssl/types.h>

#include <optional>
#include <string>

namespace imgtool::sign {

// DER signature over SHA-256(data). Throws Error if OpenSSL fails.
std::string sign_der(EVP_PKEY& private_key, const std::string& data);

// True only if `der` is a valid DER ECDSA signature of `data` by `public_key`.
// Malformed input (raw r||s, truncated DER, trailing bytes) is false, never a throw.
bool verify_der(EVP_PKEY& public_key, const std::string& data, const std::string& der);

std::string base64_encode(const std::string& bytes);
// Strict standard base64 with padding; nullopt for anything else.
std::optional<std::string> base64_decode(const std::string& text);

}  // namespace imgtool::sign
