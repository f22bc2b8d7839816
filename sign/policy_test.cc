// The trust policy (sign/policy.h): one set of strict defaults, identities by rule, and the policy
// file: what it sets, and one clear line for each kind of bad input.
#include "sign/policy.h"

#include <doctest/doctest.h>

#include <string>

#include "core/error.h"
#include "core/fs.h"

using namespace imgtool;
using sign::Policy;

namespace {
std::string error_of(const std::string& text) {
  try {
    sign::parse_policy(text, "policy.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("the defaults are the strict ones, and the identity follows the exact rule") {
  Policy p;
  CHECK(p.identity_rule == sign::IdentityRule::exact);
  CHECK(p.sbom);
  CHECK(p.hardware_evidence);
  CHECK(p.contents);
  CHECK(p.require_gpu.empty());
  CHECK(p.required_identity("reg/ai/paddle", "3.3.1-cpu") == "reg/ai/paddle:3.3.1-cpu");
  CHECK(p.required_identity("reg/ai/paddle", "") == "reg/ai/paddle");  // a digest: the repository
  CHECK(sign::describe(p) == "identity exact tag, SBOM, hardware evidence, contents gate");
  p.identity_rule = sign::IdentityRule::any_tag_of_repository;
  CHECK(p.required_identity("reg/ai/paddle", "3.3.1-cpu") == "reg/ai/paddle");
  p.identity = "reg/ai/paddle:stable";
  CHECK(p.required_identity("reg/ai/paddle", "3.3.1-cpu") == "reg/ai/paddle:stable");
}

TEST_CASE("a policy file sets what it names and keeps the defaults for the rest") {
  Policy p = sign::parse_policy(R"({"identity": "any-tag-of-repository", "hardware_evidence": false,
                                    "require_gpu": ["sm_90", "sm_80"]})",
                                "policy.json");
  CHECK(p.identity_rule == sign::IdentityRule::any_tag_of_repository);
  CHECK_FALSE(p.hardware_evidence);
  CHECK(p.sbom);
  CHECK(p.contents);
  CHECK(p.require_gpu == std::vector<std::string>{"sm_90", "sm_80"});
  CHECK(sign::describe(p) == "identity any tag of the repository, SBOM, no hardware evidence required, contents gate");
  p.hardware_evidence = true;
  CHECK(sign::describe(p) ==
        "identity any tag of the repository, SBOM, hardware evidence (sm_90, sm_80), contents gate");
  Policy fixed = sign::parse_policy(R"({"identity": "reg/ai/paddle", "sbom": false, "contents": false})", "p");
  CHECK(fixed.identity == "reg/ai/paddle");
  CHECK_FALSE(fixed.sbom);
  CHECK_FALSE(fixed.contents);
  CHECK(sign::parse_policy("{}", "p").required_identity("r/x", "t") == "r/x:t");
}

TEST_CASE("bad policy input: one line naming the field and what was expected") {
  CHECK(error_of(R"({"sbom": "yes"})") == "policy.json: sbom: expected true or false, found \"yes\"");
  CHECK(error_of(R"({"identity": ""})").find("identity: expected \"exact\"") != std::string::npos);
  CHECK(error_of(R"({"require_gpu": ["hopper"]})") ==
        "policy.json: require_gpu: expected compute capabilities sm_XY (e.g. \"sm_90\"), found \"hopper\"");
  CHECK(error_of(R"({"hardware_evidance": false})") ==
        "policy.json: hardware_evidance: expected one of identity, sbom, hardware_evidence, require_gpu, contents, "
        "found an unknown field");
  CHECK(error_of("[]") == "policy.json: (document): expected a JSON object, found []");
  CHECK(error_of("{\"sbom\": tru").rfind("policy.json:1:", 0) == 0);  // a syntax error at its line:col
  std::string deep(200, '[');
  CHECK(error_of(deep).find("policy.json:") == 0);  // nesting past the bound: refused, not recursed
}

TEST_CASE("read_policy: the file's name in the message, and a size bound") {
  PrivateTempDir dir("imgtool-policy-test-");
  write_file_atomic(dir.path() / "ok.json", R"({"sbom": false})");
  CHECK_FALSE(sign::read_policy(dir.path() / "ok.json").sbom);
  write_file_atomic(dir.path() / "big.json", "{\"identity\": \"" + std::string(70 << 10, 'a') + "\"}");
  CHECK_THROWS_AS(sign::read_policy(dir.path() / "big.json"), InputError);
  write_file_atomic(dir.path() / "bad.json", R"({"contents": 1})");
  CHECK_THROWS_WITH_AS(sign::read_policy(dir.path() / "bad.json"),
                       ((dir.path() / "bad.json").string() + ": contents: expected true or false, found 1").c_str(),
                       InputError);
  CHECK_THROWS_AS(sign::read_policy(dir.path() / "missing.json"), InputError);
}
