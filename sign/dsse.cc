#include "sign/dsse.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_file.h"
#include "sign/ecdsa.h"

namespace imgtool::sign {

using nlohmann::ordered_json;

std::string pae(const std::string& type, const std::string& body) {
  return "DSSEv1 " + std::to_string(type.size()) + " " + type + " " + std::to_string(body.size()) + " " + body;
}

std::string Envelope::serialize() const {
  ordered_json sigs = ordered_json::array();
  for (const auto& s : signatures) sigs.push_back({{"keyid", s.keyid}, {"sig", s.sig}});
  ordered_json j = {{"payloadType", payload_type}, {"payload", base64_encode(payload)}, {"signatures", sigs}};
  return j.dump();
}

Envelope sign_envelope(EVP_PKEY& key, const std::string& type, const std::string& payload) {
  return {type, payload, {{"", base64_encode(sign_der(key, pae(type, payload)))}}};
}

bool verify_envelope(EVP_PKEY& key, const Envelope& e) {
  std::string signed_bytes = pae(e.payload_type, e.payload);
  for (const auto& s : e.signatures) {
    auto der = base64_decode(s.sig);
    if (der && verify_der(key, signed_bytes, *der)) return true;
  }
  return false;
}

namespace {

[[noreturn]] void bad_envelope(const std::string& expected, const std::string& found) {
  throw CheckFailed("DSSE envelope: expected " + expected + ", found " + found);
}

std::string string_field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string())
    bad_envelope(std::string("a string \"") + key + "\"", it == j.end() ? "none" : it->dump());
  return it->get<std::string>();
}

DsseSignature parse_signature(const nlohmann::json& s) {
  if (!s.is_object()) bad_envelope("signature objects", s.dump());
  for (const auto& [k, v] : s.items())
    if (k != "keyid" && k != "sig") bad_envelope("only keyid and sig in a signature", "\"" + k + "\"");
  DsseSignature out{s.contains("keyid") ? string_field(s, "keyid") : "", string_field(s, "sig")};
  if (!base64_decode(out.sig)) bad_envelope("base64 in sig", "something else (truncated or corrupted)");
  return out;
}

}  // namespace

Envelope parse_envelope(const std::string& bytes) {
  nlohmann::json j = parse_json_or_discarded(bytes);
  if (!j.is_object()) bad_envelope("a JSON object", "invalid JSON (" + std::to_string(bytes.size()) + " bytes)");
  for (const auto& [k, v] : j.items())
    if (k != "payloadType" && k != "payload" && k != "signatures")
      bad_envelope("only payloadType, payload, signatures", "\"" + k + "\"");
  Envelope e;
  e.payload_type = string_field(j, "payloadType");
  auto payload = base64_decode(string_field(j, "payload"));
  if (!payload) bad_envelope("base64 in payload", "something else (truncated or corrupted)");
  e.payload = *payload;
  if (!j.contains("signatures") || !j["signatures"].is_array()) bad_envelope("a signatures array", "none");
  for (const auto& s : j["signatures"]) e.signatures.push_back(parse_signature(s));
  return e;
}

}  // namespace imgtool::sign
