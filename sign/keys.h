// Signing keys: ECDSA P-256 key pairs as PEM files, the form cosign reads
// (`cosign import-key-pair` takes the private key, `cosign verify --key` the
// public one).
//
// Files
//   <prefix>.key  PEM "PRIVATE KEY" (PKCS#8) or, with a passphrase,
//                 "ENCRYPTED PRIVATE KEY" (PKCS#8, PBES2: scrypt N=2^15 r=8 p=1 as cosign,
//                 AES-256-CBC; sign/pkcs8_scrypt.h; N=2^14 and PBKDF2 keys still load). Mode 0600,
//                 created 0600 from the start (never briefly world-readable).
//   <prefix>.pub  PEM "PUBLIC KEY" (SubjectPublicKeyInfo), mode 0644.
//
// Contracts
//   - load_private_key() refuses a file readable or writable by group or
//     others (as ssh does) with an InputError naming the fix (chmod 600).
//   - No function here prints or logs key material or a passphrase; error
//     messages name files, never contents.
//   - A key or passphrase read from the environment is removed from it at once
//     (take_env_secret): children never inherit it.
//   - cosign's own "ENCRYPTED SIGSTORE PRIVATE KEY" files (scrypt +
//     nacl/secretbox) are NOT read: OpenSSL has no XSalsa20. The error says so
//     and suggests creating the key with imgtool and importing it into cosign.
#pragma once
#include <openssl/types.h>

#include <filesystem>
#include <memory>
#include <string>

namespace imgtool::sign {

namespace fs = std::filesystem;

struct PkeyFree {
  void operator()(EVP_PKEY* k) const;
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

// A fresh P-256 key pair.
Pkey generate_key();

struct KeyFiles {
  fs::path private_key;  // <prefix>.key
  fs::path public_key;   // <prefix>.pub
};
KeyFiles key_files(const fs::path& prefix);

// Writes <prefix>.key (0600) and <prefix>.pub. An empty passphrase writes an
// unencrypted key. Refuses (InputError) to replace existing files unless
// `overwrite`.
KeyFiles write_key_pair(const EVP_PKEY& key, const fs::path& prefix, const std::string& passphrase,
                        bool overwrite = false);

// PEM texts (public: "PUBLIC KEY"; private: PKCS#8, encrypted if passphrase).
std::string public_key_pem(const EVP_PKEY& key);
std::string private_key_pem(const EVP_PKEY& key, const std::string& passphrase);

// Throws InputError unless `path` is a regular file with no group/other bits.
void check_private_key_mode(const fs::path& path);

// Loads a P-256 private key; checks the mode first. An encrypted key needs
// `passphrase` (InputError if missing or wrong). Not P-256 -> InputError.
Pkey load_private_key(const fs::path& path, const std::string& passphrase);
Pkey load_private_key_pem(const std::string& pem, const std::string& passphrase, const std::string& where);

// Loads a P-256 public key from PEM "PUBLIC KEY".
Pkey load_public_key(const fs::path& path);
Pkey load_public_key_pem(const std::string& pem, const std::string& where);

// Reads a passphrase from environment variable `var` ("" if var is empty).
// InputError if `var` is named but unset. The variable is taken (take_env_secret).
std::string passphrase_from_env(const std::string& var);

// The value of environment variable `var`, TAKEN: its bytes in this process's environment are
// wiped (so /proc/PID/environ no longer shows them) and the variable is unset, so no program
// imgtool starts afterwards inherits it. Call it before any child or thread starts (setenv and
// unsetenv are not thread-safe). InputError naming `flag` when the variable is unset.
std::string take_env_secret(const std::string& var, const std::string& flag);

// A private signing key named as cosign names one: a file path, or `env://VAR` for an
// environment variable holding the PEM text (what CI secrets give; no key file is ever written).
// The variable and the passphrase variable are taken (take_env_secret). A file must be 0600.
Pkey load_signing_key(const std::string& ref, const std::string& passphrase_env);
bool is_env_key(const std::string& ref);  // "env://VAR"

}  // namespace imgtool::sign
