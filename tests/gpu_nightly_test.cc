// `imgtool nightly --gpu-host test-double` on the test engine (tests/gpu_engine/engine.sh): the real
// GPU cell (the image gpu_cell_image() built, copied into the engine, found up to date) is smoked
// with `--gpus all` through the nvidia-container-runtime-hook double, gated, pushed by digest to a
// real docker-registry, signed and tagged; the report charts its throughput. Only the NVIDIA
// container runtime and the driver are doubles.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "image/registry_repository.h"
#include "sign/attestation.h"
#include "sign/keys.h"
#include "smoke/evidence.h"
#include "tests/gpu_images.h"
#include "tests/registry_fixture.h"
#include "tests/test_images.h"

using namespace imgtool::testing;
using imgtool::read_file;
using nlohmann::json;

namespace {

const char* kFakeName = "imgtool fake GPU (test double, not hardware)";
const char* kTag = "2.6.2-gpu-cuda11.8-cudnn8.6";

// A state folder that knows the GPU cell's last build (gpu_cell_image()'s state), so the nightly on
// the test engine finds the copied image up to date instead of rebuilding it there.
fs::path state_with_gpu_build(const fs::path& dir) {
  fs::create_directories(dir);
  fs::copy_file(fs::path(cache_root()) / "test-gpu-state" / "state.db", dir / "state.db");
  return dir;
}

// The GPU cell, copied into the test engine, through `imgtool nightly --gpu-host test-double` into `reg`,
// signed with a key made in `tmp` (tmp/keys/release.{key,pub}); the report in tmp/report.
struct TestDoubleNightly {
  ScratchDir tmp;
  fs::path key, report;
  imgtool::RunResult run;
  TestDoubleNightly(const std::string& name, const RegistryServer& reg)
      : tmp(name), key(tmp.path / "keys" / "release"), report(tmp.path / "report") {
    std::string img = gpu_cell_image();
    GpuEngine e;
    e.load(img);
    imgtool::sign::write_key_pair(*imgtool::sign::generate_key(), key, "");
    auto env = gpu_matrix_env();
    env["DOCKER_HOST"] = e.host;
    run = imgtool::testing::imgtool({"nightly", source_dir() + "/matrix/local-gpu.yaml", "--registry",
                                     reg.host() + "/ai", "--key", key.string() + ".key", "--report", report.string(),
                                     "--state", state_with_gpu_build(tmp.path / "state").string(), "--gpu-host",
                                     "test-double", "--records", (tmp.path / "records.db").string()},
                                    {.timeout = std::chrono::seconds(2400), .env = env});
  }
};

// One nightly for both cases below (each full run smokes the GPU cell and pushes 3 GB): the first
// judges what it published, the second moves tags and attaches attestations in the same registry
// afterwards (doctest runs the cases in file order; either alone makes the nightly itself).
struct SharedNightly {
  RegistryServer reg{RegistryServer::Mode::kHttp, "gpu-nightly"};
  TestDoubleNightly n{"gpu-nightly", reg};
};
SharedNightly& shared_nightly() {
  static SharedNightly s;
  return s;
}

}  // namespace

TEST_CASE("nightly --gpu-host test-double publishes the GPU cell, signed, and its report charts the throughput") {
  const RegistryServer& reg = shared_nightly().reg;
  const TestDoubleNightly& n = shared_nightly().n;
  const imgtool::RunResult& r = n.run;
  fs::path key = n.key, report = n.report;
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  json rep = json::parse(read_file(report / "nightly.json"));
  CHECK(rep["docker_builds"] == 0);  // the image built on the host engine, found up to date on the test engine
  CHECK(rep["gpus"].get<std::string>().find("GPU test double") != std::string::npos);
  REQUIRE(rep["cells"].size() == 1);
  const json& c = rep["cells"][0];
  CHECK(c["tag"] == kTag);
  CHECK(c["smoke"]["status"] == "pass");
  CHECK(c["publish"]["status"] == "published");
  // The smoke says what the double could not serve (its series below show the driver was reached).
  std::string smoke = c["smoke"].dump();
  CHECK(smoke.find("not judged on the GPU test double: blas") != std::string::npos);
  // Throughput: the double's kernels and the CPU baseline, never under a hardware GPU name.
  bool fake_bandwidth = false, cpu = false;
  for (auto& t : c["smoke"]["throughput"]) {
    std::string dev = t.value("gpu", ""), metric = t.value("metric", "");
    CHECK(dev.find("NVIDIA") == std::string::npos);
    fake_bandwidth |= metric == "bandwidth_copy" && dev == kFakeName;
    cpu |= metric == "cpu_matmul_fp32";
  }
  CHECK(fake_bandwidth);
  CHECK(cpu);
  // The report's chart: one drawn series per metric, the device named.
  std::string html = read_file(report / "report.html");
  CHECK(html.find("<polyline") != std::string::npos);
  CHECK(html.find("bandwidth_copy") != std::string::npos);
  CHECK(html.find(kFakeName) != std::string::npos);
  CHECK(html.find("no throughput measured") == std::string::npos);
  // What the registry holds is signed: verify it from there (static checks; the smoke ran above, on
  // the driver double: the policy without hardware evidence, which the next case holds it to).
  std::string digest = c["publish"]["digest"];
  auto v = imgtool::testing::imgtool({"verify", "docker://" + reg.host() + "/ai/paddle-local:" + kTag, "--key",
                                      key.string() + ".pub", "--no-smoke", "--json", "--allow-without-gpu-smoke"},
                                     {.timeout = std::chrono::seconds(900)});
  INFO("verify: " << v.out << v.err);
  CHECK(v.exit_code == 0);
  CHECK(v.out.find(digest) != std::string::npos);
}

namespace {

std::string evidence_row(const std::string& verify_json) {
  json j = json::parse(verify_json.empty() ? "{}" : verify_json, nullptr, false);
  if (!j.is_object() || !j.contains("checks")) return "absent";
  for (auto& c : j["checks"])
    if (c["id"] == "smoke.evidence") return c["status"].get<std::string>() + ": " + c["found"].get<std::string>();
  return "absent";
}

}  // namespace

TEST_CASE(
    "hardware evidence: a test-double smoke is attested as such; promote needs a real GPU's, or a recorded override") {
  const RegistryServer& reg = shared_nightly().reg;
  const TestDoubleNightly& n = shared_nightly().n;
  const imgtool::RunResult& r = n.run;
  fs::path key = n.key, report = n.report;
  INFO("nightly: " << r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // The summary and the report say the GPU tag carries no hardware evidence.
  CHECK(r.out.find("1 GPU tag(s) published without hardware evidence") != std::string::npos);
  CHECK(read_file(report / "report.md").find("carry no hardware evidence") != std::string::npos);
  json c = json::parse(read_file(report / "nightly.json"))["cells"][0];
  CHECK(c["smoke"]["evidence"]["host"] == "test-double");
  std::string digest = c["publish"]["digest"];
  std::string repo = "docker://" + reg.host() + "/ai/paddle-local";
  // Every verify and promote here is judged on the evidence policy alone: the layers' contents and
  // the SBOM of this digest are the first case's (each full read of the 6.8 GB image costs minutes).
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"--no-contents", "--no-sbom"});
    auto res = imgtool::testing::imgtool(args, {.timeout = std::chrono::seconds(900)});
    MESSAGE("imgtool " << args[0] << " -> " << res.exit_code << "\n" << res.out << res.err);
    return res;
  };
  auto verify = [&](const std::string& ref, std::vector<std::string> more = {}) {
    std::vector<std::string> a = {"verify", ref, "--key", key.string() + ".pub", "--no-smoke", "--json"};
    a.insert(a.end(), more.begin(), more.end());
    return cli(a);
  };

  // verify shows how it was smoked; the default policy (hardware evidence, as promote's) fails it,
  // --allow-without-gpu-smoke judges it without and warns.
  auto v = verify(repo + ":" + kTag);
  CHECK(v.exit_code == 1);
  CHECK(evidence_row(v.out).rfind("fail: test-double (imgtool's driver double, not hardware)", 0) == 0);
  auto lax = verify(repo + ":" + kTag, {"--allow-without-gpu-smoke"});
  CHECK(lax.exit_code == 0);
  CHECK(evidence_row(lax.out).rfind("warn: test-double (imgtool's driver double, not hardware)", 0) == 0);

  // promote refuses the GPU image; the override needs --sign-key, and is recorded and shown.
  std::string by_digest = repo + "@" + digest;
  auto p = cli(
      {"promote", by_digest, "--tag", "release", "--key", key.string() + ".pub", "--sign-key", key.string() + ".key"});
  CHECK(p.exit_code == 1);
  CHECK(p.err.find("expected hardware evidence for this gpu image") != std::string::npos);
  CHECK(cli({"promote", by_digest, "--tag", "release", "--key", key.string() + ".pub", "--allow-without-gpu-smoke"})
            .exit_code == 2);
  CHECK(cli({"promote", by_digest, "--tag", "release-override", "--key", key.string() + ".pub", "--sign-key",
             key.string() + ".key", "--allow-without-gpu-smoke"})
            .exit_code == 0);
  // The override is shown; the verifier's own policy decides (the default fails it, as it fails kTag).
  CHECK(verify(repo + ":release-override").exit_code == 1);
  auto override_verify = verify(repo + ":release-override", {"--allow-without-gpu-smoke"});
  CHECK(override_verify.exit_code == 0);
  std::string overridden = evidence_row(override_verify.out);
  CHECK(overridden.rfind("warn: test-double", 0) == 0);
  CHECK(overridden.find("promoted with --allow-without-gpu-smoke") != std::string::npos);

  // Hardware statements for this digest, signed with the nightly's key, each newer than the last
  // (attestations are chosen by their signed time, smoke/evidence.h):
  auto attest = [&](imgtool::smoke::SmokeEvidence e, const std::string& attested) {
    e.attested = attested;
    auto k = imgtool::sign::load_private_key(key.string() + ".key", "");
    imgtool::image::RegistryRepository rr(std::make_shared<imgtool::image::Registry>(reg.host(), reg.options()),
                                          "ai/paddle-local");
    imgtool::sign::attach_attestation(
        rr, *k, {digest, rr.name(), imgtool::smoke::kSmokePredicateType, imgtool::smoke::to_predicate(e)});
  };
  auto promote = [&] {
    return cli({"promote", by_digest, "--tag", "release", "--key", key.string() + ".pub", "--sign-key",
                key.string() + ".key"});
  };
  // 1. The document bench/gpu-probe.sh recorded on an NVIDIA H100, REPLAYED (its source says so), its
  //    verdict edited to pass: a bare document is unbound, whatever it says.
  auto h100 = json::parse(read_file(source_dir() + "/smoke/probe/testdata/h100-probe.json"));
  auto replayed = imgtool::smoke::evidence_from_probe(h100, "replayed: smoke/probe/testdata/h100-probe.json (test)");
  replayed.verdict = "pass";
  attest(replayed, "2099-01-01T00:00:01Z");
  p = promote();
  CHECK(p.exit_code == 1);
  CHECK(p.err.find("(unbound: a bare document") != std::string::npos);
  // 2. The same run as a BOUND pass (a stand-in for a smoke imgtool ran on that H100; built here, the
  //    source says so): refused all the same, the image has no sm_90 code -- Paddle 2.6.2 on an H100
  //    computed zeros for x + 1 (../shared/reference/hardware).
  auto bound = replayed;
  bound.bound = true;
  bound.source = "test stand-in for a bound run (gpu_nightly_test)";
  attest(bound, "2099-01-01T00:00:02Z");
  p = promote();
  CHECK(p.exit_code == 1);
  CHECK(p.err.find("but the image was not compiled for NVIDIA H100 80GB HBM3") != std::string::npos);
  // 3. A bound pass on a GPU the image was compiled for (the stand-in's device made an A100, sm_80).
  auto a100 = bound;
  a100.devices[0].name = "NVIDIA A100-SXM4-80GB";
  a100.devices[0].cc = "8.0";
  attest(a100, "2099-01-01T00:00:03Z");
  p = promote();
  CHECK(p.exit_code == 0);
  CHECK(p.out.find("smoke: hardware, 1× NVIDIA A100-SXM4-80GB") != std::string::npos);
  auto released = verify(repo + ":release");  // hardware evidence required, as by default
  CHECK(released.exit_code == 0);
  std::string row = evidence_row(released.out);
  CHECK(row.rfind("pass: hardware, 1× NVIDIA A100-SXM4-80GB, driver 580.159.04", 0) == 0);
  CHECK(row.find("[test stand-in for a bound run (gpu_nightly_test)]") != std::string::npos);
}
