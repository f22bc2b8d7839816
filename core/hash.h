// SHA-256 through OpenSSL, and OCI digest strings ("sha256:<hex>").
#pragma once
#include <memory>
#include <string>
#include <string_view>

namespace imgtool {

// Incremental SHA-256. update() any number of times, then hex() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  void update(const void* data, size_t len);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::string hex();     // finalises; call once
  std::string digest();  // "sha256:" + hex()
 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string sha256_hex(std::string_view data);
std::string sha256_digest(std::string_view data);  // "sha256:<hex>"
std::string sha256_file_hex(const std::string& path);

// True if s is "sha256:" followed by 64 lowercase hex digits.
bool is_sha256_digest(std::string_view s);

}  // namespace imgtool
