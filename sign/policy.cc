#include "sign/policy.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/gpu_arch.h"
#include "core/json_file.h"
#include "sign/check_signature.h"

namespace imgtool::sign {

std::string Policy::required_identity(const std::string& repository, const std::string& tag) const {
  if (!identity.empty()) return identity;
  return sign::required_identity(repository, tag, identity_rule == IdentityRule::any_tag_of_repository);
}

std::string describe(const Policy& p) {
  std::string s = !p.identity.empty()                                      ? "identity " + p.identity
                  : p.identity_rule == IdentityRule::any_tag_of_repository ? "identity any tag of the repository"
                                                                           : "identity exact tag";
  s += p.sbom ? ", SBOM" : ", no SBOM required";
  s += p.hardware_evidence ? ", hardware evidence" : ", no hardware evidence required";
  for (size_t i = 0; p.hardware_evidence && i < p.require_gpu.size(); ++i)
    s += (i ? ", " : " (") + p.require_gpu[i] + (i + 1 == p.require_gpu.size() ? ")" : "");
  s += p.contents ? ", contents gate" : ", no contents gate";
  return s;
}

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& where, const std::string& field, const std::string& expected,
                      const json& found) {
  std::string f = found.dump();
  if (f.size() > 80) f = f.substr(0, 77) + "...";
  throw InputError(where + ": " + field + ": expected " + expected + ", found " + f);
}

bool boolean(const json& v, const std::string& where, const char* field) {
  if (!v.is_boolean()) bad(where, field, "true or false", v);
  return v.get<bool>();
}

void read_identity(const json& v, const std::string& where, Policy& p) {
  if (!v.is_string() || v.get<std::string>().empty())
    bad(where, "identity", "\"exact\", \"any-tag-of-repository\" or a docker-reference REGISTRY/REPO[:TAG]", v);
  std::string s = v.get<std::string>();
  if (s == "exact")
    p.identity_rule = IdentityRule::exact;
  else if (s == "any-tag-of-repository")
    p.identity_rule = IdentityRule::any_tag_of_repository;
  else
    p.identity = s;
}

void read_gpus(const json& v, const std::string& where, Policy& p) {
  if (!v.is_array() || v.size() > 64) bad(where, "require_gpu", "a list of compute capabilities (\"sm_90\")", v);
  for (const auto& g : v) {
    if (!g.is_string() || !parse_arch(g.get<std::string>()))
      bad(where, "require_gpu", "compute capabilities sm_XY (e.g. \"sm_90\")", g);
    p.require_gpu.push_back(g.get<std::string>());
  }
}

Policy from_json(const json& j, const std::string& where) {
  if (!j.is_object()) bad(where, "(document)", "a JSON object", j);
  Policy p;
  for (const auto& [k, v] : j.items()) {
    if (k == "identity")
      read_identity(v, where, p);
    else if (k == "sbom")
      p.sbom = boolean(v, where, "sbom");
    else if (k == "hardware_evidence")
      p.hardware_evidence = boolean(v, where, "hardware_evidence");
    else if (k == "contents")
      p.contents = boolean(v, where, "contents");
    else if (k == "require_gpu")
      read_gpus(v, where, p);
    else
      throw InputError(where + ": " + k +
                       ": expected one of identity, sbom, hardware_evidence, require_gpu, contents, found an "
                       "unknown field");
  }
  return p;
}

}  // namespace

Policy parse_policy(const std::string& text, const std::string& where) {
  return from_json(parse_json_text(text, where, "a policy in JSON"), where);
}

Policy read_policy(const std::filesystem::path& file) {
  return from_json(read_json_file(file, "a policy in JSON", size_t{64} << 10), file.string());
}

}  // namespace imgtool::sign
