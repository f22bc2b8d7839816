#include "sign/pkcs8_scrypt.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include <memory>

#include "core/error.h"

namespace imgtool::sign {
namespace {

template <auto Free>
struct Freer {
  template <class T>
  void operator()(T* p) const {
    Free(p);
  }
};
using Algor = std::unique_ptr<X509_ALGOR, Freer<X509_ALGOR_free>>;
using Sig = std::unique_ptr<X509_SIG, Freer<X509_SIG_free>>;
using P8Info = std::unique_ptr<PKCS8_PRIV_KEY_INFO, Freer<PKCS8_PRIV_KEY_INFO_free>>;
using Pbe2 = std::unique_ptr<PBE2PARAM, Freer<PBE2PARAM_free>>;
using ScryptAsn1 = std::unique_ptr<SCRYPT_PARAMS, Freer<SCRYPT_PARAMS_free>>;
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, Freer<EVP_CIPHER_CTX_free>>;
using MemBio = std::unique_ptr<BIO, Freer<BIO_free>>;

// Bytes wiped when they go (derived keys, the key's plaintext DER).
struct Secret {
  std::string bytes;
  explicit Secret(size_t n) : bytes(n, '\0') {}
  ~Secret() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
  unsigned char* data() { return reinterpret_cast<unsigned char*>(bytes.data()); }
};

// 128·r·(N+2) (scrypt's V) + 128·r·p (its B), as OpenSSL counts; 0 when it overflows.
uint64_t scrypt_bytes(const ScryptParams& s) {
  if (s.r == 0 || s.p == 0 || s.r > (1u << 20) || s.p > (1u << 20) || s.n > (1ull << 40)) return 0;
  return 128 * s.r * (s.n + 2) + 128 * s.r * s.p;
}

void check_scrypt(const ScryptParams& s, const std::string& where) {
  uint64_t need = scrypt_bytes(s);
  if (s.n < 2 || (s.n & (s.n - 1)) != 0 || need == 0 || need > kScryptMaxMem)
    throw InputError(where + ": expected scrypt parameters within " + std::to_string(kScryptMaxMem >> 20) +
                     " MiB (N a power of two; imgtool and cosign write N=32768, r=8, p=1), found N=" +
                     std::to_string(s.n) + ", r=" + std::to_string(s.r) + ", p=" + std::to_string(s.p) +
                     "; refusing to derive the key. Fix: re-encrypt it with `imgtool keygen`");
}

bool derive(const std::string& pass, const unsigned char* salt, size_t saltlen, const ScryptParams& s, Secret& key) {
  return EVP_PBE_scrypt(pass.data(), pass.size(), salt, saltlen, s.n, s.r, s.p, kScryptMaxMem, key.data(),
                        key.bytes.size()) == 1;
}

// AlgorithmIdentifier {PBES2, {scrypt {salt, N, r, p}, aes-256-cbc {iv}}} (RFC 8018, RFC 7914 §7).
Algor pbes2_scrypt(const unsigned char* salt, int saltlen, const unsigned char* iv, const ScryptParams& s) {
  ScryptAsn1 sp(SCRYPT_PARAMS_new());
  Pbe2 pbe2(PBE2PARAM_new());
  Algor alg(X509_ALGOR_new());
  ASN1_TYPE* ivt = ASN1_TYPE_new();
  if (!sp || !pbe2 || !alg || !ivt || !ASN1_OCTET_STRING_set(sp->salt, salt, saltlen) ||
      !ASN1_INTEGER_set_uint64(sp->costParameter, s.n) || !ASN1_INTEGER_set_uint64(sp->blockSize, s.r) ||
      !ASN1_INTEGER_set_uint64(sp->parallelizationParameter, s.p) ||
      !ASN1_TYPE_set_octetstring(ivt, const_cast<unsigned char*>(iv), 16)) {
    ASN1_TYPE_free(ivt);
    throw Error("cannot set up scrypt key encryption");
  }
  X509_ALGOR_set0(pbe2->encryption, OBJ_nid2obj(NID_aes_256_cbc), V_ASN1_UNDEF, nullptr);
  pbe2->encryption->parameter = ivt;
  ASN1_TYPE* kdf = ASN1_TYPE_pack_sequence(ASN1_ITEM_rptr(SCRYPT_PARAMS), sp.get(), nullptr);
  if (!kdf) throw Error("cannot set up scrypt key encryption");
  X509_ALGOR_set0(pbe2->keyfunc, OBJ_nid2obj(NID_id_scrypt), V_ASN1_UNDEF, nullptr);
  pbe2->keyfunc->parameter = kdf;
  ASN1_TYPE* params = ASN1_TYPE_pack_sequence(ASN1_ITEM_rptr(PBE2PARAM), pbe2.get(), nullptr);
  if (!params) throw Error("cannot set up scrypt key encryption");
  X509_ALGOR_set0(alg.get(), OBJ_nid2obj(NID_pbes2), V_ASN1_UNDEF, nullptr);
  alg->parameter = params;
  return alg;
}

// `in` through `ctx` (its cipher, key and IV set) into `out`, padding included.
bool cipher_all(EVP_CIPHER_CTX* ctx, const unsigned char* in, int len, Secret& out) {
  int n = 0, tail = 0;
  out.bytes.assign(static_cast<size_t>(len) + EVP_MAX_BLOCK_LENGTH, '\0');
  bool ok = EVP_CipherUpdate(ctx, out.data(), &n, in, len) == 1 && EVP_CipherFinal_ex(ctx, out.data() + n, &tail) == 1;
  out.bytes.resize(ok ? static_cast<size_t>(n + tail) : 0);
  return ok;
}

// Decrypts with `cipher`, `key` and the IV in `param` (the encryption scheme's parameters).
bool decrypt(const EVP_CIPHER* cipher, const ASN1_TYPE* param, Secret& key, const ASN1_OCTET_STRING& in, Secret& out) {
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  return ctx && param && EVP_DecryptInit_ex(ctx.get(), cipher, nullptr, nullptr, nullptr) == 1 &&
         EVP_CIPHER_asn1_to_param(ctx.get(), const_cast<ASN1_TYPE*>(param)) > 0 &&
         EVP_CIPHER_CTX_get_key_length(ctx.get()) == static_cast<int>(key.bytes.size()) &&
         EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, key.data(), nullptr) == 1 &&
         cipher_all(ctx.get(), ASN1_STRING_get0_data(&in), ASN1_STRING_length(&in), out);
}

// PBES2 with scrypt, decrypted here; nullptr for a wrong passphrase or a malformed key.
P8Info scrypt_decrypt(const PBE2PARAM& pbe2, const ASN1_OCTET_STRING& data, const std::string& pass,
                      const std::string& where) {
  ScryptAsn1 sp(
      static_cast<SCRYPT_PARAMS*>(ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(SCRYPT_PARAMS), pbe2.keyfunc->parameter)));
  const EVP_CIPHER* cipher = EVP_get_cipherbyobj(pbe2.encryption->algorithm);
  ScryptParams s{0, 0, 0};
  if (!sp || !cipher || !ASN1_INTEGER_get_uint64(&s.n, sp->costParameter) ||
      !ASN1_INTEGER_get_uint64(&s.r, sp->blockSize) || !ASN1_INTEGER_get_uint64(&s.p, sp->parallelizationParameter))
    return nullptr;
  check_scrypt(s, where);
  Secret key(static_cast<size_t>(EVP_CIPHER_get_key_length(cipher))), der(0);
  uint64_t keylen = 0;
  if (sp->keyLength && (!ASN1_INTEGER_get_uint64(&keylen, sp->keyLength) || keylen != key.bytes.size())) return nullptr;
  if (!derive(pass, ASN1_STRING_get0_data(sp->salt), static_cast<size_t>(ASN1_STRING_length(sp->salt)), s, key) ||
      !decrypt(cipher, pbe2.encryption->parameter, key, data, der))
    return nullptr;
  const unsigned char* p = der.data();
  return P8Info(d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, static_cast<long>(der.bytes.size())));
}

// The PBES2 parameters of `alg` when its key derivation is scrypt, else nullptr.
Pbe2 scrypt_pbes2(const X509_ALGOR& alg) {
  if (OBJ_obj2nid(alg.algorithm) != NID_pbes2) return nullptr;
  Pbe2 pbe2(static_cast<PBE2PARAM*>(ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBE2PARAM), alg.parameter)));
  if (!pbe2 || !pbe2->keyfunc || !pbe2->encryption || OBJ_obj2nid(pbe2->keyfunc->algorithm) != NID_id_scrypt)
    return nullptr;
  return pbe2;
}

// The key's PKCS#8 PrivateKeyInfo, DER.
Secret private_key_der(const EVP_PKEY& key) {
  P8Info p8(EVP_PKEY2PKCS8(&key));
  unsigned char* der = nullptr;
  int len = p8 ? i2d_PKCS8_PRIV_KEY_INFO(p8.get(), &der) : -1;
  if (len <= 0) throw Error("cannot encode the private key");
  Secret out(0);
  out.bytes.assign(reinterpret_cast<char*>(der), static_cast<size_t>(len));
  OPENSSL_clear_free(der, static_cast<size_t>(len));
  return out;
}

// PEM "ENCRYPTED PRIVATE KEY": EncryptedPrivateKeyInfo {alg, ciphertext}.
std::string encrypted_pem(const X509_ALGOR& alg, Secret& ciphertext) {
  Sig sig(X509_SIG_new());
  X509_ALGOR* sig_alg = nullptr;
  ASN1_OCTET_STRING* sig_data = nullptr;
  if (sig) X509_SIG_getm(sig.get(), &sig_alg, &sig_data);
  MemBio b(BIO_new(BIO_s_mem()));
  if (!sig || !X509_ALGOR_copy(sig_alg, &alg) ||
      !ASN1_OCTET_STRING_set(sig_data, ciphertext.data(), static_cast<int>(ciphertext.bytes.size())) || !b ||
      !PEM_write_bio_PKCS8(b.get(), sig.get()))
    throw Error("cannot encode the encrypted private key");
  char* text = nullptr;
  long n = BIO_get_mem_data(b.get(), &text);
  return std::string(text, static_cast<size_t>(n));
}

}  // namespace

std::string encrypted_pkcs8_pem(const EVP_PKEY& key, const std::string& passphrase, const ScryptParams& s) {
  check_scrypt(s, "scrypt key encryption");
  unsigned char salt[16], iv[16];
  if (RAND_bytes(salt, sizeof salt) != 1 || RAND_bytes(iv, sizeof iv) != 1)
    throw Error("cannot encrypt the private key");
  Secret der = private_key_der(key), key_bytes(32), out(0);
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  if (!ctx || !derive(passphrase, salt, sizeof salt, s, key_bytes) ||
      EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_cbc(), nullptr, key_bytes.data(), iv) != 1 ||
      !cipher_all(ctx.get(), der.data(), static_cast<int>(der.bytes.size()), out))
    throw Error("cannot encrypt the private key");
  return encrypted_pem(*pbes2_scrypt(salt, sizeof salt, iv, s), out);
}

Pkey decrypt_pkcs8_pem(const std::string& pem, const std::string& passphrase, const std::string& where) {
  MemBio b(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Sig sig(b ? PEM_read_bio_PKCS8(b.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!sig || passphrase.empty()) return nullptr;
  const X509_ALGOR* alg = nullptr;
  const ASN1_OCTET_STRING* data = nullptr;
  X509_SIG_get0(sig.get(), &alg, &data);
  Pbe2 pbe2 = scrypt_pbes2(*alg);
  P8Info p8(pbe2 ? scrypt_decrypt(*pbe2, *data, passphrase, where)
                 : P8Info(PKCS8_decrypt(sig.get(), passphrase.data(), static_cast<int>(passphrase.size()))));
  ERR_clear_error();
  return p8 ? Pkey(EVP_PKCS82PKEY(p8.get())) : nullptr;
}

}  // namespace imgtool::sign
