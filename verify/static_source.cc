#include "verify/static_source.h"

#include "core/error.h"

namespace imgtool::verify {

std::string pick_platform(const image::Manifest& index, const std::string& where) {
  auto j = index.json();
  for (const auto& m : j.value("manifests", nlohmann::json::array())) {
    auto p = m.value("platform", nlohmann::json::object());
    if (p.value("os", "") == "linux" && p.value("architecture", "") == "amd64") return m.at("digest");
  }
  throw Error(where + ": expected a linux/amd64 image in the index, found none");
}

std::string image_digest(const image::Manifest& m, const std::string& where) {
  std::string mt = m.media_type.empty() ? m.json().value("mediaType", "") : m.media_type;
  if (mt == image::media::kOciIndex || mt == image::media::kDockerList) return pick_platform(m, where);
  return m.digest();
}

}  // namespace imgtool::verify
