#include "sign/keys.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/fs.h"
#include "sign/pkcs8_scrypt.h"

namespace imgtool::sign {

void PkeyFree::operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }

namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using Bio = std::unique_ptr<BIO, BioFree>;

std::string bio_text(BIO* b) {
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  return std::string(data, static_cast<size_t>(n));
}

// OpenSSL's passphrase callback: hands over the given passphrase, never
// prompts on a terminal. An empty passphrase makes decryption fail cleanly.
int pass_cb(char* buf, int size, int /*rwflag*/, void* u) {
  auto* pass = static_cast<const std::string*>(u);
  if (pass->empty() || static_cast<int>(pass->size()) > size) return -1;
  std::memcpy(buf, pass->data(), pass->size());
  return static_cast<int>(pass->size());
}

void require_p256(const EVP_PKEY* key, const std::string& where) {
  char group[64] = {0};
  size_t len = 0;
  bool ec = EVP_PKEY_is_a(key, "EC") &&
            EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &len);
  if (!ec || std::string(group) != "prime256v1")
    throw InputError(where + ": expected an ECDSA P-256 key, found " +
                     (ec ? "curve " + std::string(group) : std::string("another key type")) +
                     "; create one with `imgtool keygen`");
}

// Creates `path` exclusively with `mode` from the first byte on.
void write_new_file(const fs::path& path, const std::string& content, unsigned mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) throw Error("cannot create " + path.string() + ": " + std::strerror(errno));
  ::fchmod(fd, mode);  // umask must not widen or narrow it
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n <= 0) {
      ::close(fd);
      throw Error("cannot write " + path.string() + ": " + std::strerror(errno));
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) throw Error("cannot write " + path.string());
}

// Writes via a private temp name then renames, so a crash leaves no partial key.
void install_file(const fs::path& path, const std::string& content, unsigned mode) {
  fs::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  fs::remove(tmp);
  write_new_file(tmp, content, mode);
  fs::rename(tmp, path);
}

// A PEM private key other than encrypted PKCS#8: plain PKCS#8, or the traditional EC form
// (encrypted with a Proc-Type header, `openssl ec -aes256`); never prompts.
Pkey other_private_key(const std::string& pem, const std::string& passphrase) {
  Bio b(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  std::string pass = passphrase;
  Pkey k(PEM_read_bio_PrivateKey(b.get(), nullptr, pass_cb, &pass));
  OPENSSL_cleanse(pass.data(), pass.size());
  ERR_clear_error();
  return k;
}

bool looks_like_cosign_key(const std::string& pem) {
  return pem.find("ENCRYPTED SIGSTORE PRIVATE KEY") != std::string::npos ||
         pem.find("ENCRYPTED COSIGN PRIVATE KEY") != std::string::npos;
}

}  // namespace

Pkey generate_key() {
  Pkey k(EVP_EC_gen("P-256"));
  if (!k) throw Error("cannot generate a P-256 key (OpenSSL EVP_EC_gen failed)");
  return k;
}

KeyFiles key_files(const fs::path& prefix) {
  // "" or "keys/" would make the hidden files ".key"/"keys/.key" nobody asked for.
  std::string name = prefix.filename().string();
  if (name.empty() || name == "." || name == "..")
    throw InputError(
        "key path prefix '" + prefix.string() +
        "': expected a prefix ending in a file name, like keys/release (for keys/release.key and keys/release.pub)");
  fs::path key = prefix, pub = prefix;
  key += ".key";
  pub += ".pub";
  return {key, pub};
}

std::string public_key_pem(const EVP_PKEY& key) {
  Bio b(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_PUBKEY(b.get(), &key)) throw Error("cannot encode the public key");
  return bio_text(b.get());
}

namespace {}  // namespace

std::string private_key_pem(const EVP_PKEY& key, const std::string& passphrase) {
  Bio b(BIO_new(BIO_s_mem()));
  if (passphrase.empty()) {
    if (!PEM_write_bio_PKCS8PrivateKey(b.get(), &key, nullptr, nullptr, 0, nullptr, nullptr))
      throw Error("cannot encode the private key");
  } else {
    return encrypted_pkcs8_pem(key, passphrase);  // scrypt N=2^15, r=8, p=1 (sign/pkcs8_scrypt.h)
  }
  return bio_text(b.get());
}

KeyFiles write_key_pair(const EVP_PKEY& key, const fs::path& prefix, const std::string& passphrase, bool overwrite) {
  KeyFiles f = key_files(prefix);
  for (const auto& p : {f.private_key, f.public_key})
    if (!overwrite && fs::exists(p))
      throw InputError(p.string() +
                       ": expected no existing file, found one; "
                       "choose another --out or pass --force to replace it");
  if (f.private_key.has_parent_path()) fs::create_directories(f.private_key.parent_path());
  std::string pem = private_key_pem(key, passphrase);
  install_file(f.private_key, pem, 0600);
  OPENSSL_cleanse(pem.data(), pem.size());
  install_file(f.public_key, public_key_pem(key), 0644);
  return f;
}

void check_private_key_mode(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw InputError(path.string() + ": expected a private key file, found none");
  if (!S_ISREG(st.st_mode)) throw InputError(path.string() + ": expected a regular file for the private key");
  if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    throw InputError(path.string() + ": private key permissions " + mode +
                     " are too open (expected 0600: readable by its owner only); "
                     "refusing to use it. Fix: chmod 600 " +
                     path.string());
  }
}

Pkey load_private_key_pem(const std::string& pem, const std::string& passphrase, const std::string& where) {
  if (looks_like_cosign_key(pem))
    throw InputError(where +
                     ": this is a cosign-encrypted key (scrypt + nacl/secretbox), which "
                     "imgtool cannot read; expected a PEM PKCS#8 key. Fix: create the key with "
                     "`imgtool keygen` and give it to cosign with `cosign import-key-pair`");
  bool encrypted = pem.find("ENCRYPTED PRIVATE KEY") != std::string::npos;
  Pkey k = encrypted ? decrypt_pkcs8_pem(pem, passphrase, where) : other_private_key(pem, passphrase);
  if (!k) {
    if (encrypted && passphrase.empty())
      throw InputError(where +
                       ": the private key is encrypted and no passphrase was given; "
                       "pass --passphrase-env VAR naming a variable that holds it");
    throw InputError(where + (encrypted ? ": cannot decrypt the private key (wrong passphrase?)"
                                        : ": expected a PEM private key (PKCS#8), could not parse it"));
  }
  require_p256(k.get(), where);
  return k;
}

Pkey load_private_key(const fs::path& path, const std::string& passphrase) {
  check_private_key_mode(path);
  std::string pem = read_file(path);
  Pkey k = load_private_key_pem(pem, passphrase, path.string());
  OPENSSL_cleanse(pem.data(), pem.size());
  return k;
}

Pkey load_public_key_pem(const std::string& pem, const std::string& where) {
  Bio b(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Pkey k(PEM_read_bio_PUBKEY(b.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (!k)
    throw InputError(where +
                     ": expected a PEM \"PUBLIC KEY\" (as written by `imgtool keygen` "
                     "or `cosign generate-key-pair`), could not parse it");
  require_p256(k.get(), where);
  return k;
}

Pkey load_public_key(const fs::path& path) {
  if (!fs::is_regular_file(path)) throw InputError(path.string() + ": expected a public key file, found none");
  return load_public_key_pem(read_file(path), path.string());
}

std::string take_env_secret(const std::string& var, const std::string& flag) {
  char* v = std::getenv(var.c_str());
  if (!v) throw InputError(flag + ": expected the environment variable " + var + " to be set, found it unset");
  std::string value(v);
  // Unset first (unsetenv finds the entry by its name), then wipe "NAME=value" where it lies: the
  // process's first environment block is what /proc/PID/environ shows for the rest of its life.
  char* entry = v - var.size() - 1;
  ::unsetenv(var.c_str());
  OPENSSL_cleanse(entry, var.size() + 1 + value.size());
  return value;
}

std::string passphrase_from_env(const std::string& var) {
  if (var.empty()) return "";
  return take_env_secret(var, "--passphrase-env " + var);
}

bool is_env_key(const std::string& ref) { return ref.rfind("env://", 0) == 0; }

Pkey load_signing_key(const std::string& ref, const std::string& passphrase_env) {
  if (!is_env_key(ref)) return load_private_key(ref, passphrase_from_env(passphrase_env));
  std::string var = ref.substr(6);
  if (var.empty()) throw InputError("--key env://VAR: expected a variable name after env://, found none");
  std::string pem = take_env_secret(var, "--key " + ref);
  if (pem.find("-----BEGIN") == std::string::npos) {
    OPENSSL_cleanse(pem.data(), pem.size());
    throw InputError("--key " + ref + ": expected the PEM text of a private key in " + var +
                     ", found no PEM block (a CI 'file' variable holds a path: give the key's text instead)");
  }
  std::string pass = passphrase_from_env(passphrase_env);
  Pkey k = load_private_key_pem(pem, pass, "--key " + ref);
  OPENSSL_cleanse(pem.data(), pem.size());
  OPENSSL_cleanse(pass.data(), pass.size());
  return k;
}

}  // namespace imgtool::sign
