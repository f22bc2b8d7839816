#include "image/image.h"

#include "core/error.h"
#include "core/hash.h"
#include "core/json_file.h"

namespace imgtool::image {

void to_json(nlohmann::json& j, const Descriptor& d) {
  j = nlohmann::json{{"mediaType", d.media_type}, {"digest", d.digest}, {"size", d.size}};
  if (!d.annotations.empty()) j["annotations"] = d.annotations;
}

void from_json(const nlohmann::json& j, Descriptor& d) {
  d.media_type = j.value("mediaType", "");
  d.digest = j.at("digest").get<std::string>();
  // An integer that fits int64: get<int64_t>() of a float out of range is undefined
  // behaviour (UBSan, found by fuzz_manifest: "size": 1.1e119).
  const nlohmann::json& size = j.at("size");
  if (!size.is_number_integer() || (size.is_number_unsigned() && size.get<uint64_t>() > INT64_MAX))
    throw Error("descriptor: expected an integer size, found " + size.dump());
  d.size = size.get<int64_t>();
  if (j.contains("annotations")) d.annotations = j["annotations"].get<std::map<std::string, std::string>>();
  if (!is_sha256_digest(d.digest)) throw Error("descriptor: expected a sha256 digest, found '" + d.digest + "'");
}

std::string Manifest::digest() const { return sha256_digest(raw); }

nlohmann::json Manifest::json() const {
  if (json_too_deep_at(raw))
    throw Error("manifest " + digest() + " is nested deeper than " + std::to_string(kMaxJsonDepth) +
                " levels: not an image manifest");
  try {
    return nlohmann::json::parse(raw);
  } catch (const nlohmann::json::exception& e) {
    throw Error("manifest " + digest() + " is not valid JSON: " + e.what());
  }
}

namespace {
// An image manifest imgtool can copy, verify and tag: schema 2, OCI or Docker v2 (an OCI
// manifest may leave mediaType out). Anything else would be copied and tagged blindly.
nlohmann::json checked(const Manifest& m) {
  nlohmann::json j = m.json();
  auto fail = [&](const std::string& why) { throw InputError("manifest " + m.digest() + ": " + why); };
  if (!j.is_object()) fail(std::string("expected a JSON object, found ") + j.type_name());
  auto v = j.find("schemaVersion");
  if (v == j.end() || !v->is_number_integer() || v->get<int64_t>() != 2)
    fail("expected \"schemaVersion\": 2, found " + (v == j.end() ? std::string("none") : v->dump()));
  std::string type = m.media_type;
  if (auto t = j.find("mediaType"); t != j.end()) type = t->is_string() ? t->get<std::string>() : t->dump();
  if (!type.empty() && type != media::kOciManifest && type != media::kDockerManifest)
    fail("expected \"mediaType\" " + std::string(media::kOciManifest) + " or " + media::kDockerManifest + ", found '" +
         type + "'");
  if (!j.contains("config") || !j["config"].is_object()) fail("expected a \"config\" descriptor, found none");
  if (j.contains("layers") && !j["layers"].is_array()) fail("expected \"layers\" to be a list");
  return j;
}

// A descriptor of the wrong shape is the manifest's fault: say so, naming it.
template <class T>
T descriptors(const Manifest& m, const nlohmann::json& j, const char* field) {
  try {
    return j.get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError("manifest " + m.digest() + ": expected \"" + field +
                     "\" descriptors {mediaType, digest, size}, found: " + e.what());
  }
}
}  // namespace

Descriptor Manifest::config() const { return descriptors<Descriptor>(*this, checked(*this).at("config"), "config"); }

std::vector<Descriptor> Manifest::layers() const {
  auto j = checked(*this);
  if (!j.contains("layers")) return {};
  return descriptors<std::vector<Descriptor>>(*this, j["layers"], "layers");
}

std::string read_all(BlobReader& r, size_t max) {
  std::string out;
  char buf[65536];
  while (size_t n = r.read(buf, sizeof buf)) {
    if (out.size() + n > max)
      throw Error("a manifest, config or signature payload is larger than the " + std::to_string(max) + "-byte limit");
    out.append(buf, n);
  }
  return out;
}

void ImageSource::read_tars(const std::vector<std::string>&, const TarSink&) {
  throw Error(describe() + ": cannot hand out its layers uncompressed (no tar_layers())");
}

Descriptor ImageDestination::put_blob_stream(StreamingBlob&) {
  throw Error(describe() + ": cannot store a blob of unknown digest (no streamed upload)");
}

}  // namespace imgtool::image
