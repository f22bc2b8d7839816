// imgtool select --repository against a REAL docker-registry on 127.0.0.1:
// three labelled images pushed with `imgtool copy`, two signed with
// `imgtool sign`, one left unsigned and one signed with another key — only
// tags whose signature verifies may be chosen, and, under the one trust policy
// (sign/policy.h), only tags with their SBOM attestation and, for gpu tags,
// hardware evidence.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "image/registry.h"
#include "image/registry_repository.h"
#include "sign/attestation.h"
#include "sign/keys.h"
#include "smoke/evidence.h"
#include "tests/fixtures.h"
#include "tests/registry_fixture.h"

using namespace imgtool;
using namespace imgtool::testing;

namespace {

void build_labelled(const std::string& name, const std::map<std::string, std::string>& labels) {
  ScratchDir ctx("select-ctx");
  std::string df = "FROM scratch\nCOPY marker /marker\n";
  for (auto& [k, v] : labels) df += "LABEL " + k + "=\"" + v + "\"\n";
  write_file_atomic(ctx.path / "Dockerfile", df);
  write_file_atomic(ctx.path / "marker", name + "\n");
  auto r = imgtool::run({"docker", "build", "-q", "-t", name, ctx.path.string()});
  REQUIRE_MESSAGE(r.ok(), (r.out + r.err));
}

RunResult cli(const std::vector<std::string>& args) {
  RunResult r = imgtool::testing::imgtool(args);
  MESSAGE("imgtool " << args[0] << " -> " << r.exit_code << "\n" << r.out << r.err);
  return r;
}

std::map<std::string, std::string> gpu(const std::string& paddle, const std::string& cuda,
                                       const std::string& min_driver) {
  return {{"io.imgtool.variant", "gpu"},
          {"io.imgtool.paddle", paddle},
          {"io.imgtool.python", "3.11"},
          {"io.imgtool.cuda", cuda},
          {"io.imgtool.min-driver", min_driver},
          {"io.imgtool.cuda-archs", "sm_70,sm_80,sm_90"}};  // select recommends no image whose GPU code is unknown
}

// These cases are about drivers and architectures: the images never ran on a GPU, so they are judged
// under the policy without hardware evidence (the policy's own case below holds them to it).
const char* const kNoHardware = "--allow-without-gpu-smoke";

}  // namespace

TEST_CASE("select from a registry keeps only tags whose signature verifies") {
  RegistryServer server;
  ScratchDir d("select");
  std::string repo = "docker://" + server.host() + "/ai/paddle", k = (d.path / "release").string(),
              other = (d.path / "other").string();
  REQUIRE(cli({"keygen", "--out", k}).ok());
  REQUIRE(cli({"keygen", "--out", other}).ok());
  const std::map<std::string, std::map<std::string, std::string>> images = {
      {"3.2.0-gpu-cuda12.6-cudnn9.5", gpu("3.2.0", "12.6", "525.60.13")},
      {"3.2.0-gpu-cuda11.8-cudnn8.9", gpu("3.2.0", "11.8", "450.80.02")},
      {"3.1.0-gpu-cuda12.6-cudnn9.5", gpu("3.1.0", "12.6", "525.60.13")},
      {"3.2.0", {{"io.imgtool.variant", "cpu"}, {"io.imgtool.paddle", "3.2.0"}, {"io.imgtool.python", "3.11"}}}};
  for (auto& [tag, labels] : images) {
    std::string local = "imgtool-run-test/select:" + tag;
    build_labelled(local, labels);
    REQUIRE(cli({"copy", "docker-daemon:" + local, repo + ":" + tag}).ok());
    imgtool::run({"docker", "rmi", "-f", local});
  }
  // Signed with the release key: 11.8, 3.1.0 on 12.6, cpu. The 3.2.0 12.6 tag: signed by another key only.
  for (auto tag : {"3.2.0-gpu-cuda11.8-cudnn8.9", "3.1.0-gpu-cuda12.6-cudnn9.5", "3.2.0"})
    REQUIRE(cli({"sign", repo + ":" + tag, "--key", k + ".key"}).ok());
  REQUIRE(cli({"sign", repo + ":3.2.0-gpu-cuda12.6-cudnn9.5", "--key", other + ".key"}).ok());

  SUBCASE("an H100 with 550: 3.2.0/12.6 (signed by another key) is refused; the newest signed Paddle wins") {
    auto r = cli({"select", "--repository", repo, "--key", k + ".pub", "--host-driver", "550.54.15", "--gpu",
                  "H100 SXM", "--json", kNoHardware});
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["tag"] == "3.2.0-gpu-cuda11.8-cudnn8.9");
    bool refused = false;
    for (auto& p : j["passed_over"])
      if (p["tag"] == "3.2.0-gpu-cuda12.6-cudnn9.5") refused = p["rule"] == "signature";
    CHECK(refused);
  }
  SUBCASE("the same with the other key: only its tag verifies") {
    auto r = cli({"select", "--repository", repo, "--key", other + ".pub", "--host-driver", "550.54.15", "--gpu",
                  "NVIDIA H100 80GB HBM3", kNoHardware});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("best tag: 3.2.0-gpu-cuda12.6-cudnn9.5") != std::string::npos);
  }
  SUBCASE("a 535 driver on an A100 (family name): the CUDA 11.8 tag") {
    auto r = cli({"select", "--repository", repo, "--key", k + ".pub", "--host-driver", "535.104.05", "--gpu", "A100",
                  kNoHardware});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("best tag: 3.2.0-gpu-cuda11.8-cudnn8.9") != std::string::npos);
  }
  SUBCASE("this machine (no NVIDIA driver here): the signed cpu tag") {
    auto r = cli({"select", "--repository", repo, "--key", k + ".pub", "--json"});
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    if (j["host"].get<std::string>().rfind("no NVIDIA driver", 0) == 0) CHECK(j["tag"] == "3.2.0");
  }
  SUBCASE("a tag whose digest is signed for another tag is refused unless --any-tag-of-repository") {
    image::Registry reg(server.host(), server.options());
    auto m = reg.get_manifest("ai/paddle", "3.2.0-gpu-cuda11.8-cudnn8.9");
    reg.put_manifest("ai/paddle", "3.3.0-gpu-cuda11.8-cudnn8.9", m.raw, m.media_type);  // signed as 3.2.0-… only
    std::vector<std::string> args{"select",     "--repository", repo,   "--key",     k + ".pub", "--host-driver",
                                  "535.104.05", "--gpu",        "A100", kNoHardware, "--json"};
    auto r = cli(args);
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["tag"] == "3.2.0-gpu-cuda11.8-cudnn8.9");
    CHECK(j["digest"] == m.digest());  // the digest whose signature was verified
    CHECK(j["pull"] == server.host() + "/ai/paddle@" + m.digest());
    auto refused_for_identity = [](const nlohmann::json& report) {
      for (auto& p : report["passed_over"])
        if (p["tag"] == "3.3.0-gpu-cuda11.8-cudnn8.9")
          return p["rule"] == "signature" &&
                 p["why"].get<std::string>().find("signed identity is") != std::string::npos;
      return false;
    };
    CHECK(refused_for_identity(j));  // before: its signature for 3.2.0-… was accepted for 3.3.0-…
    args.push_back("--any-tag-of-repository");
    CHECK_FALSE(refused_for_identity(nlohmann::json::parse(cli(args).out)));
    args.pop_back(), args.pop_back();
    auto text = cli(args);
    CHECK(text.out.find("verified: its signature holds for " + m.digest() + "; pull " + server.host() + "/ai/paddle@" +
                        m.digest()) != std::string::npos);
  }
  SUBCASE("the one policy: a gpu tag needs hardware evidence, as verify and promote ask") {
    std::vector<std::string> args{"select",        "--repository", repo,    "--key", k + ".pub",
                                  "--host-driver", "550.54.15",    "--gpu", "H100",  "--json"};
    auto r = cli(args);
    auto j = nlohmann::json::parse(r.out);
    std::map<std::string, std::string> rule;
    for (auto& p : j["passed_over"]) rule[p["tag"]] = p["rule"];
    CHECK(rule["3.2.0-gpu-cuda11.8-cudnn8.9"] == "hardware evidence");  // signed and attested, never on a GPU
    CHECK(rule["3.1.0-gpu-cuda12.6-cudnn9.5"] == "hardware evidence");
    CHECK(rule["3.2.0-gpu-cuda12.6-cudnn9.5"] == "signature");
    // A bound pass on an H100 (the document recorded on a lent H100, replayed and marked bound here:
    // a stand-in for a smoke imgtool ran there), attested with the release key: the tag is chosen.
    auto h100 = nlohmann::json::parse(read_file(source_dir() + "/smoke/probe/testdata/h100-probe.json"));
    smoke::SmokeEvidence e = smoke::evidence_from_probe(h100, "test stand-in for a bound H100 run (select test)");
    e.bound = true;
    e.verdict = "pass";
    e.attested = "2099-01-01T00:00:00Z";
    auto reg = std::make_shared<image::Registry>(server.host(), server.options());
    image::RegistryRepository rr(reg, "ai/paddle");
    std::string digest = reg->get_manifest("ai/paddle", "3.2.0-gpu-cuda11.8-cudnn8.9").digest();
    auto key = sign::load_private_key(k + ".key", "");
    sign::attach_attestation(rr, *key, {digest, rr.name(), smoke::kSmokePredicateType, smoke::to_predicate(e)});
    r = cli(args);
    REQUIRE(r.exit_code == 0);
    CHECK(nlohmann::json::parse(r.out)["tag"] == "3.2.0-gpu-cuda11.8-cudnn8.9");
    // --no-sbom is the only way past a tag signed without its SBOM attestation
    REQUIRE(cli({"sign", repo + ":3.2.0-gpu-cuda11.8-cudnn8.9", "--key", other + ".key", "--no-sbom"}).ok());
    args[4] = other + ".pub";
    args.push_back(kNoHardware);
    rule.clear();
    auto strict_sbom = nlohmann::json::parse(cli(args).out);  // (held: a range-for over a temporary's member dangles)
    for (auto& p : strict_sbom["passed_over"]) rule[p["tag"]] = p["rule"];
    CHECK(rule["3.2.0-gpu-cuda11.8-cudnn8.9"] == "sbom");
    args.push_back("--no-sbom");
    auto relaxed = nlohmann::json::parse(cli(args).out);
    CHECK(relaxed["tag"] == "3.2.0-gpu-cuda12.6-cudnn9.5");  // the other key's newest CUDA
    for (auto& p : relaxed["passed_over"]) CHECK(p["rule"] != "sbom");
  }
  SUBCASE("bad input") {
    CHECK(cli({"select", "--repository", repo}).exit_code == 2);
    CHECK(cli({"select", "--repository", repo + ":3.2.0", "--key", k + ".pub"}).exit_code == 2);
    CHECK(cli({"select"}).exit_code == 2);
  }
}
