// The cosign "simple signing" payload: the exact bytes that are signed.
//   {"critical":{"identity":{"docker-reference":"REGISTRY/REPO:TAG"},
//    "image":{"docker-manifest-digest":"sha256:…"},
//    "type":"cosign container image signature"},"optional":null}
// serialize() writes that byte layout (keys in that order, no spaces), as
// cosign does. parse_payload() is strict like containers/image: exactly these
// keys, case-sensitive, string values, the exact type string; `optional` is
// null or an object of strings.
#pragma once
#include <map>
#include <string>

namespace imgtool::sign {

inline constexpr const char* kPayloadType = "cosign container image signature";

struct Payload {
  std::string docker_reference;                 // "REGISTRY/REPO:TAG" (cosign ignores it; containers/image checks it)
  std::string manifest_digest;                  // "sha256:<hex>"
  std::map<std::string, std::string> optional;  // empty -> null

  std::string serialize() const;
};

// Throws CheckFailed("signature payload: expected …, found …") on any deviation.
Payload parse_payload(const std::string& bytes);

}  // namespace imgtool::sign
