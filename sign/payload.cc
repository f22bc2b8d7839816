#include "sign/payload.h"

#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "core/error.h"
#include "core/hash.h"
#include "core/json_file.h"

namespace imgtool::sign {

using nlohmann::json;

std::string Payload::serialize() const {
  // nlohmann::json orders keys alphabetically, which is exactly cosign's
  // field order (critical < optional; identity < image < type).
  json j;
  j["critical"]["identity"]["docker-reference"] = docker_reference;
  j["critical"]["image"]["docker-manifest-digest"] = manifest_digest;
  j["critical"]["type"] = kPayloadType;
  j["optional"] = optional.empty() ? json(nullptr) : json(optional);
  return j.dump();
}

namespace {

[[noreturn]] void bad(const std::string& what) { throw CheckFailed("signature payload: " + what); }

void require_keys(const json& j, const std::set<std::string>& keys, const std::string& where) {
  if (!j.is_object()) bad("expected " + where + " to be an object, found " + j.type_name());
  std::set<std::string> found;
  for (auto it = j.begin(); it != j.end(); ++it) found.insert(it.key());
  if (found != keys) {
    std::string e, f;
    for (auto& k : keys) e += (e.empty() ? "" : ",") + k;
    for (auto& k : found) f += (f.empty() ? "" : ",") + k;
    bad("expected exactly the keys {" + e + "} in " + where + ", found {" + f + "}");
  }
}

std::string string_at(const json& j, const std::string& key, const std::string& where) {
  require_keys(j, {key}, where);
  if (!j[key].is_string()) bad("expected " + where + "." + key + " to be a string");
  return j[key].get<std::string>();
}

// JSON with every object's keys unique (nlohmann keeps the last of a duplicate
// silently; other parsers keep the first, so a duplicate could make two
// verifiers read two different digests out of one signed payload).
json parse_unique_keys(const std::string& bytes) {
  std::vector<std::set<std::string>> open;
  std::string duplicate;
  json::parser_callback_t cb = [&](int, json::parse_event_t ev, json& parsed) {
    if (ev == json::parse_event_t::object_start) open.emplace_back();
    if (ev == json::parse_event_t::object_end && !open.empty()) open.pop_back();
    if (ev == json::parse_event_t::key && !open.empty() && !open.back().insert(parsed.get<std::string>()).second &&
        duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  if (json_too_deep_at(bytes))
    bad("expected JSON nested at most " + std::to_string(kMaxJsonDepth) + " levels deep, found deeper nesting");
  json j = json::parse(bytes, cb, false);
  if (j.is_discarded()) bad("expected JSON, found unparsable bytes");
  if (!duplicate.empty()) bad("expected each key once, found \"" + duplicate + "\" twice in one object");
  return j;
}

}  // namespace

Payload parse_payload(const std::string& bytes) {
  json j = parse_unique_keys(bytes);
  require_keys(j, {"critical", "optional"}, "the payload");
  const json& c = j["critical"];
  require_keys(c, {"identity", "image", "type"}, "critical");
  if (!c["type"].is_string() || c["type"] != kPayloadType)
    bad(std::string("expected critical.type \"") + kPayloadType + "\", found " + c["type"].dump());
  Payload p;
  p.docker_reference = string_at(c["identity"], "docker-reference", "critical.identity");
  p.manifest_digest = string_at(c["image"], "docker-manifest-digest", "critical.image");
  if (!is_sha256_digest(p.manifest_digest))
    bad("expected a sha256:<hex> manifest digest, found \"" + p.manifest_digest + "\"");
  const json& o = j["optional"];
  if (!o.is_null() && !o.is_object()) bad("expected optional to be null or an object");
  if (o.is_object())
    for (auto it = o.begin(); it != o.end(); ++it) {
      if (!it->is_string()) bad("expected optional." + it.key() + " to be a string");
      p.optional[it.key()] = it->get<std::string>();
    }
  return p;
}

}  // namespace imgtool::sign
