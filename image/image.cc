#include "image/image.h"

#include "core/error.h"
#include "core/hash.h"

namespace imgtool::image {

void to_json(nlohmann::json& j, const Descriptor& d) {
  j = nlohmann::json{{"mediaType", d.media_type}, {"digest", d.digest}, {"size", d.size}};
  if (!d.annotations.empty()) j["annotations"] = d.annotations;
}

void from_json(const nlohmann::json& j, Descriptor& d) {
  d.media_type = j.value("mediaType", "");
  d.digest = j.at("digest").get<std::string>();
  d.size = j.at("size").get<int64_t>();
  if (j.contains("annotations")) d.annotations = j["annotations"].get<std::map<std::string, std::string>>();
  if (!is_sha256_digest(d.digest)) throw Error("descriptor: expected a sha256 digest, found '" + d.digest + "'");
}

std::string Manifest::digest() const { return sha256_digest(raw); }

nlohmann::json Manifest::json() const {
  try {
    return nlohmann::json::parse(raw);
  } catch (const nlohmann::json::exception& e) {
    throw Error("manifest " + digest() + " is not valid JSON: " + e.what());
  }
}

Descriptor Manifest::config() const { return json().at("config").get<Descriptor>(); }

std::vector<Descriptor> Manifest::layers() const {
  auto j = json();
  if (!j.contains("layers")) return {};
  return j["layers"].get<std::vector<Descriptor>>();
}

std::string read_all(BlobReader& r) {
  std::string out;
  char buf[65536];
  while (size_t n = r.read(buf, sizeof buf)) out.append(buf, n);
  return out;
}

}  // namespace imgtool::image
