// Encrypted PKCS#8 private keys ("ENCRYPTED PRIVATE KEY", PBES2, RFC 8018), with scrypt run under
// a memory limit of our own.
//
// Why not OpenSSL's PEM/PKCS#8 calls: they run scrypt with a fixed 32 MiB limit
// (SCRYPT_MAX_MEM), and cosign's parameters — N = 2^15, r = 8, p = 1, as `cosign generate-key-pair`
// uses — need 128·r·(N+2) bytes, just over it: writing fails in PKCS5_pbe2_set_scrypt and
// reading in the PEM decryption. Here the PBES2 parameters are written and read by hand and
// scrypt is EVP_PBE_scrypt with kScryptMaxMem.
//
//   written  PBES2: scrypt (N = 2^15, r = 8, p = 1; 16-byte random salt) + AES-256-CBC (random IV)
//   read     PBES2 with scrypt (imgtool's N = 2^15 keys and the older N = 2^14 ones, `openssl pkcs8
//            -scrypt`), or anything else OpenSSL's PKCS8_decrypt reads (PBES2 with PBKDF2: keys of
//            older imgtool versions and `openssl pkcs8 -v2 aes-256-cbc`).
// A key's scrypt parameters are checked BEFORE any memory is spent: N a power of two, and
// 128·r·(N+2) + 128·r·p within kScryptMaxMem (a hostile key asking for gigabytes is refused).
#pragma once
#include <openssl/types.h>

#include <cstdint>
#include <string>

#include "sign/keys.h"

namespace imgtool::sign {

struct ScryptParams {
  uint64_t n = 1 << 15, r = 8, p = 1;  // cosign's
};

inline constexpr uint64_t kScryptMaxMem = 128ull << 20;  // N = 2^16 at r = 8 still fits

// PEM "ENCRYPTED PRIVATE KEY" of `key` under `passphrase` (non-empty). Error if OpenSSL fails.
std::string encrypted_pkcs8_pem(const EVP_PKEY& key, const std::string& passphrase, const ScryptParams& params = {});

// The key in an "ENCRYPTED PRIVATE KEY" PEM, or nullptr when it does not decrypt with
// `passphrase` (wrong passphrase, or not an encrypted PKCS#8 key). InputError naming `where`
// for scrypt parameters out of bounds.
Pkey decrypt_pkcs8_pem(const std::string& pem, const std::string& passphrase, const std::string& where);

}  // namespace imgtool::sign
