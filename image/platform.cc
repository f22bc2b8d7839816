#include "image/platform.h"

#include "core/error.h"
#include "core/hash.h"
#include "core/strings.h"

namespace imgtool::image {

bool is_index(const Manifest& m) {
  std::string mt = m.media_type.empty() ? m.json().value("mediaType", "") : m.media_type;
  return mt == media::kOciIndex || mt == media::kDockerList;
}

namespace {

// j[key] when j is an object and that member a string; else "".
std::string string_member(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

bool is_platform(const nlohmann::json& entry, const Platform& p) {
  auto it = entry.is_object() ? entry.find("platform") : entry.end();
  return it != entry.end() && string_member(*it, "os") == p.os && string_member(*it, "architecture") == p.architecture;
}

}  // namespace

std::string pick_platform(const Manifest& index, const std::string& where, const Platform& p) {
  auto j = index.json();
  auto manifests = j.is_object() ? j.value("manifests", nlohmann::json::array()) : nlohmann::json::array();
  for (const auto& m : manifests.is_array() ? manifests : nlohmann::json::array()) {
    if (!is_platform(m, p)) continue;
    std::string d = string_member(m, "digest");
    if (!is_sha256_digest(d))
      throw Error(where + ": the index's " + p.text() + " entry names digest " +
                  strings::quoted(m.contains("digest") ? m["digest"].dump() : "(none)") +
                  ", expected sha256:<64 lowercase hex> (a malformed or hostile index)");
    return d;
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
  if (r.transport != Transport::docker) return src;
  Manifest named = src->manifest();
  Reference pinned = r.with_digest(platform_digest(named, r.text, p));
  if (index_digest && is_index(named)) *index_digest = named.digest();
  return open_source(pinned, o);
}

}  // namespace imgtool::image
