// `imgtool verify docker://… --key PUB` = static checks + GPU smoke, against a
// REAL docker-registry on 127.0.0.1 and the real Docker engine (no GPU here):
//  - an honest cpu image with the real paddlepaddle CPU wheel, pushed and signed,
//    absent from the local engine: verify loads it by digest under a temporary
//    name, smokes it (pass), removes the name; JSON and JUnit carry the smoke rows;
//  - the same wheel in a gpu-labelled image (present locally: reused by ID) fails
//    in the smoke rows: --gpus auto = all -> NVIDIA runtime missing (with the fix),
//    --gpus none -> CPU-only Paddle build in a gpu image + no --gpus;
//  - --no-smoke has no smoke rows; a wrong key fails and the image is not run.
// Images: imgtool-test/paddle-cpu:3.3.1 and imgtool-test/paddle-cpu-as-gpu:3.3.1 come from
// tests/test_images.h (shared with the smoke test, built once); the cpu image
// here only adds a LABEL layer on top.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "core/hash.h"
#include "tests/fixtures.h"
#include "tests/registry_fixture.h"
#include "tests/test_images.h"

using namespace imgtool;
using namespace imgtool::testing;
using nlohmann::json;

namespace {

// An honest cpu image: every claim the static checks need, true of its contents. A LABEL layer only.
std::string honest_cpu_image(const std::string& base) {
  ScratchDir ctx("verify-smoke-ctx");
  return ensure_image("imgtool-test/verify-smoke:cpu",
                      "FROM " + base +
                          "\nLABEL io.imgtool.paddle=3.3.1 io.imgtool.python=3.11 io.imgtool.variant=cpu "
                          "io.imgtool.tag=3.3.1-cpu\n",
                      ctx.path.string());
}

// --- helpers ---

RunResult cli(std::vector<std::string> args, const std::string& records) {
  RunResult r =
      imgtool::testing::imgtool(args, {.timeout = std::chrono::seconds(1200), .env = {{"IMGTOOL_RECORDS", records}}});
  MESSAGE("imgtool " << args[0] << " " << args[1] << " -> " << r.exit_code << "\n"
                     << r.out.substr(0, 8000) << "\nstderr: " << r.err.substr(0, 4000));
  return r;
}

std::string push(const std::string& local, const std::string& dst, const std::string& records) {
  auto r = cli({"copy", "docker-daemon:" + local, dst, "--json"}, records);
  REQUIRE(r.ok());
  return json::parse(r.out)["digest"];
}

const json* check(const json& report, const std::string& id) {
  for (const auto& c : report["checks"])
    if (c["id"] == id) return &c;
  return nullptr;
}

std::string status(const json& report, const std::string& id) {
  const json* c = check(report, id);
  return c ? (*c)["status"].get<std::string>() : "(absent)";
}

// Rows of a smoke run by this verify; smoke.evidence is not one (it reads the registry's smoke
// attestation, and is there with or without --no-smoke).
bool has_smoke_rows(const json& report) {
  for (const auto& c : report["checks"])
    if (c["id"].get<std::string>().rfind("smoke", 0) == 0 && c["id"] != "smoke.evidence") return true;
  return false;
}

bool image_exists(const std::string& ref) { return run({"docker", "image", "inspect", ref}).ok(); }

}  // namespace

TEST_CASE("verify = static checks + smoke: cpu image passes, gpu-labelled CPU wheel fails, --no-smoke skips") {
  RegistryServer server;
  ScratchDir d("verify-smoke");
  std::string records = (d.path / "records.db").string();
  std::string repo = "docker://" + server.host() + "/ai/paddle";
  std::string k = (d.path / "release").string(), other = (d.path / "other").string();
  REQUIRE(cli({"keygen", "--out", k}, records).ok());
  REQUIRE(cli({"keygen", "--out", other}, records).ok());

  std::string base = paddle_cpu_image();
  std::string cpu = honest_cpu_image(base);
  std::string gpu = labelled("imgtool-test/paddle-cpu-as-gpu:3.3.1", base, "gpu");

  std::string cpu_digest = push(cpu, repo + ":3.3.1-cpu", records);
  REQUIRE(cli({"sign", repo + ":3.3.1-cpu", "--key", k + ".key"}, records).ok());
  push(gpu, repo + ":3.3.1-gpu-cuda12.6", records);
  REQUIRE(cli({"sign", repo + ":3.3.1-gpu-cuda12.6", "--key", k + ".key"}, records).ok());

  // The cpu image now exists only in the registry: verify must load it by digest.
  std::string cpu_id = run({"docker", "image", "inspect", "-f", "{{.Id}}", cpu}).out;
  REQUIRE(run({"docker", "image", "rm", cpu}).ok());
  REQUIRE_FALSE(image_exists(cpu));

  {  // honest cpu image: static checks and smoke pass; JSON and JUnit carry the smoke rows
    std::string xml = (d.path / "cpu.xml").string();
    auto r = cli({"verify", repo + ":3.3.1-cpu", "--key", k + ".pub", "--shm-size", "2g", "--json", "--junit", xml},
                 records);
    CHECK(r.exit_code == 0);
    json j = json::parse(r.out);
    CHECK(j["ok"] == true);
    CHECK(status(j, "signature") == "pass");
    CHECK(status(j, "claims.build") == "pass");
    CHECK(status(j, "smoke.load") == "pass");
    REQUIRE(check(j, "smoke.load") != nullptr);
    CHECK((*check(j, "smoke.load"))["found"].get<std::string>().find("loaded by digest " + cpu_digest.substr(0, 19)) !=
          std::string::npos);
    CHECK(status(j, "smoke") == "pass");
    CHECK(status(j, "smoke.paddle") == "pass");
    CHECK(status(j, "smoke.environment") == "pass");
    CHECK(status(j, "smoke.shm") == "pass");        // --shm-size 2g reached docker run
    CHECK(status(j, "smoke.libraries") == "skip");  // none needed in a cpu image
    for (const auto& c : j["checks"]) CHECK_MESSAGE(c["status"] != "fail", c.dump());
    std::string junit = read_file(xml);
    CHECK(junit.find("failures=\"0\"") != std::string::npos);
    CHECK(junit.find("name=\"smoke.paddle\"") != std::string::npos);
    CHECK(junit.find("name=\"smoke\"") != std::string::npos);
    CHECK(junit.find("name=\"smoke.load\"") != std::string::npos);
    // the temporary name is gone, and with it the loaded image (nothing else referenced it)
    auto left = run({"docker", "images", "-q", "--filter",
                     "reference=imgtool-verify/ai/paddle:" + cpu_digest.substr(7, 12) + "-*"});
    CHECK(left.out.empty());
    if (!cpu_id.empty()) CHECK_FALSE(image_exists(cpu_id.substr(0, cpu_id.find('\n'))));
  }

  {  // --no-smoke: static checks only, no smoke rows
    auto r = cli({"verify", repo + ":3.3.1-cpu", "--key", k + ".pub", "--no-smoke", "--json"}, records);
    CHECK(r.exit_code == 0);
    json j = json::parse(r.out);
    CHECK_FALSE(has_smoke_rows(j));
    // `imgtool sign` attests no smoke: verify says so, as a warning (a cpu image needs no hardware evidence)
    CHECK(status(j, "smoke.evidence") == "warn");
    CHECK((*check(j, "smoke.evidence"))["found"].get<std::string>().find(
              "nothing says whether the image was ever run") != std::string::npos);
  }

  {  // wrong key: the signature fails and the image is not run
    auto r = cli({"verify", repo + ":3.3.1-cpu", "--key", other + ".pub", "--json"}, records);
    CHECK(r.exit_code == 1);
    json j = json::parse(r.out);
    CHECK(status(j, "signature") == "fail");
    CHECK(status(j, "smoke") == "skip");
    CHECK(check(j, "smoke.load") == nullptr);
  }

  {  // gpu-labelled image, default --gpus auto = all: no NVIDIA runtime on this host (or, on a GPU host, CPU-only
     // Paddle)
    std::string xml = (d.path / "gpu.xml").string();
    auto r = cli({"verify", repo + ":3.3.1-gpu-cuda12.6", "--key", k + ".pub", "--json", "--junit", xml}, records);
    CHECK(r.exit_code == 1);
    json j = json::parse(r.out);
    CHECK(status(j, "signature") == "pass");
    CHECK(status(j, "smoke.load") == "pass");  // present locally: reused by image ID, not loaded
    CHECK((*check(j, "smoke.load"))["found"].get<std::string>().find("already present") != std::string::npos);
    CHECK(status(j, "smoke") == "fail");
    bool no_runtime =
        status(j, "smoke.host") == "fail" &&
        (*check(j, "smoke.host"))["found"].get<std::string>().find("could not select device driver") !=
            std::string::npos &&
        (*check(j, "smoke.host"))["fix"].get<std::string>().find("nvidia-ctk runtime configure") != std::string::npos;
    bool cpu_only =
        status(j, "smoke.paddle") == "fail" && (*check(j, "smoke.paddle"))["found"].get<std::string>().find(
                                                   "CPU-only Paddle build in a gpu image") != std::string::npos;
    CHECK_MESSAGE((no_runtime || cpu_only), j.dump(2));
    std::string argv_gpus = (*check(j, "smoke"))["expected"];
    CHECK(argv_gpus.find("--gpus all") != std::string::npos);
    std::string junit = read_file(xml);
    CHECK(junit.find("name=\"smoke\"") != std::string::npos);
    CHECK(junit.find("<failure") != std::string::npos);
    CHECK(image_exists(gpu));  // a reused local image is never removed
  }

  {  // gpu-labelled image, --gpus none: the probe runs and says why: CPU-only Paddle, no --gpus
    auto rj = cli({"verify", repo + ":3.3.1-gpu-cuda12.6", "--key", k + ".pub", "--gpus", "none", "--shm-size", "2g",
                   "--no-claims", "--json"},
                  records);
    CHECK(rj.exit_code == 1);
    json j = json::parse(rj.out);
    CHECK(status(j, "smoke.paddle") == "fail");
    CHECK((*check(j, "smoke.paddle"))["found"].get<std::string>().find("CPU-only Paddle build in a gpu image") !=
          std::string::npos);
    CHECK(status(j, "smoke.driver") == "fail");
    CHECK((*check(j, "smoke.driver"))["found"].get<std::string>().find("no --gpus") != std::string::npos);
    CHECK((*check(j, "smoke.driver"))["fix"].get<std::string>().find("--gpus all") != std::string::npos);
    CHECK(status(j, "smoke") == "fail");
  }
}
