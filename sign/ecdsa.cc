#include "sign/ecdsa.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <memory>

#include "core/error.h"

namespace imgtool::sign {

namespace {
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

const auto* u8(const std::string& s) { return reinterpret_cast<const unsigned char*>(s.data()); }
}  // namespace

std::string sign_der(EVP_PKEY& key, const std::string& data) {
  MdCtx ctx(EVP_MD_CTX_new());
  size_t len = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, &key) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, u8(data), data.size()) != 1)
    throw Error("ECDSA signing failed to start (OpenSSL)");
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, u8(data), data.size()) != 1)
    throw Error("ECDSA signing failed (OpenSSL)");
  sig.resize(len);
  return sig;
}

bool verify_der(EVP_PKEY& key, const std::string& data, const std::string& der) {
  MdCtx ctx(EVP_MD_CTX_new());
  bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, &key) == 1 &&
            EVP_DigestVerify(ctx.get(), u8(der), der.size(), u8(data), data.size()) == 1;
  ERR_clear_error();
  return ok;
}

std::string base64_encode(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), u8(bytes), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<std::string> base64_decode(const std::string& text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  for (char c : text)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '=')) return std::nullopt;
  size_t pad = text.find('=');
  if (pad != std::string::npos && (pad < text.size() - 2 || text.find_first_not_of('=', pad) != std::string::npos))
    return std::nullopt;
  std::string out(text.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), u8(text), static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  size_t pads = pad == std::string::npos ? 0 : text.size() - pad;
  out.resize(static_cast<size_t>(n) - pads);
  return out;
}

}  // namespace imgtool::sign
