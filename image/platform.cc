#include "image/platform.h"

#include "core/error.h"

namespace imgtool::image {

bool is_index(const Manifest& m) {
  std::string mt = m.media_type.empty() ? m.json().value("mediaType", "") : m.media_type;
  return mt == media::kOciIndex || mt == media::kDockerList;
}

std::string pick_platform(const Manifest& index, const std::string& where, const Platform& p) {
  auto j = index.json();
  for (const auto& m : j.value("manifests", nlohmann::json::array())) {
    auto plat = m.value("platform", nlohmann::json::object());
    if (plat.value("os", "") == p.os && plat.value("architecture", "") == p.architecture) return m.at("digest");
  }
  throw Error(where + ": expected a " + p.text() + " image in the index, found none");
}

std::string platform_digest(const Manifest& m, const std::string& where, const Platform& p) {
  return is_index(m) ? pick_platform(m, where, p) : m.digest();
}

std::unique_ptr<ImageSource> open_platform_source(const Reference& r, const TransportOptions& o, const Platform& p,
                                                  std::string* index_digest) {
  if (index_digest) index_digest->clear();
  auto src = open_source(r, o);
  if (r.transport != "docker") return src;
  Manifest named = src->manifest();
  Reference pinned = r;
  pinned.digest = platform_digest(named, r.text, p);
  if (index_digest && is_index(named)) *index_digest = named.digest();
  return open_source(pinned, o);
}

}  // namespace imgtool::image
