// run-config through the imgtool binary against real images (built FROM
// scratch with imgtool labels by the real engine) and the real validators:
// `docker-compose config` for compose, `kubernetes-validate --strict` for
// Kubernetes (version runconf::kK8sVersion), exit 2 + one line for bad input.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "run/render.h"
#include "run/testing/validators.h"
#include "tests/fixtures.h"
#include "tests/test_images.h"

using namespace imgtool;
using namespace imgtool::testing;
namespace rv = imgtool::runconf::testing;

namespace {

void build_labelled(const std::string& name, const std::map<std::string, std::string>& labels) {
  ScratchDir ctx("run-ctx");
  std::string df = "FROM scratch\n";
  for (auto& [k, v] : labels) df += "LABEL " + k + "=\"" + v + "\"\n";
  write_file_atomic(ctx.path / "Dockerfile", df);
  auto r = imgtool::run({"docker", "build", "-q", "-t", name, ctx.path.string()});
  REQUIRE_MESSAGE(r.ok(), (r.out + r.err));
}

RunResult cli(const std::vector<std::string>& args) {
  RunResult r = imgtool::testing::imgtool(args);
  MESSAGE("imgtool " << args[0] << " -> " << r.exit_code << "\n" << r.out << r.err);
  return r;
}

int lines_of(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

const char* kGpu = "imgtool-run-test/paddle:3.2.0-gpu-cuda12.6";
const char* kCpu = "imgtool-run-test/paddle:3.2.0-cpu";

}  // namespace

TEST_CASE("run-config renders what the real validators accept, and refuses what the image cannot do") {
  build_labelled(kGpu, {{"io.imgtool.variant", "gpu"},
                        {"io.imgtool.cuda", "12.6"},
                        {"io.imgtool.paddle", "3.2.0"},
                        {"io.imgtool.min-driver", "525.60.13"}});
  build_labelled(kCpu, {{"io.imgtool.variant", "cpu"}, {"io.imgtool.paddle", "3.2.0"}});
  std::string project = source_dir() + "/run/examples/invoice-ocr.yaml";
  ScratchDir d("run-config");

  SUBCASE("docker: one line") {
    auto r = cli({"run-config", kGpu, "--profile", project, "--format", "docker"});
    REQUIRE(r.exit_code == 0);
    CHECK(lines_of(r.out) == 1);
    CHECK(r.out.find("--gpus all --shm-size 16g --ulimit memlock=-1 --ulimit stack=67108864") !=
          std::string::npos);  // gpus: auto
  }
  SUBCASE("the default profile on a cpu image: no GPU (issue 26); gpus=0 on Kubernetes is valid") {
    auto docker = cli({"run-config", kCpu, "--format", "docker"});
    REQUIRE(docker.exit_code == 0);
    CHECK(docker.out.find("--gpus") == std::string::npos);
    CHECK(rv::docker_run_problem(docker.out, kCpu, {}) == "");
    auto k8s = cli({"run-config", kCpu, "--format", "k8s", "--set", "gpus=0"});
    REQUIRE(k8s.exit_code == 0);
    CHECK(k8s.out.find("resources") == std::string::npos);
    write_file_atomic(d.path / "cpu-job.yaml", k8s.out);
    auto gpu = cli({"run-config", kGpu, "--format", "k8s"});
    REQUIRE(gpu.exit_code == 0);
    CHECK(gpu.out.find("nvidia.com/gpu: \"1\"") != std::string::npos);  // auto on Kubernetes: one GPU
    write_file_atomic(d.path / "gpu-job.yaml", gpu.out);
    for (auto& fp : rv::k8s_problems({d.path / "cpu-job.yaml", d.path / "gpu-job.yaml"}))
      CHECK_MESSAGE(fp.second == "", fp.first);
  }
  SUBCASE("compose passes docker-compose config") {
    auto r = cli({"run-config", "docker-daemon:" + std::string(kGpu), "--profile", project, "--format", "compose"});
    REQUIRE(r.exit_code == 0);
    write_file_atomic(d.path / "compose.yaml", r.out);
    auto v = imgtool::run({"docker-compose", "-f", (d.path / "compose.yaml").string(), "config"});
    CHECK_MESSAGE(v.ok(), (v.out + v.err));
    CHECK(v.out.find("capabilities:") != std::string::npos);
  }
  SUBCASE("k8s Job and Deployment pass kubernetes-validate --strict") {
    for (std::string kind : {"job", "deployment"}) {
      auto r = cli({"run-config", kGpu, "--profile", project, "--format", "k8s", "--kind", kind});
      REQUIRE(r.exit_code == 0);
      write_file_atomic(d.path / (kind + ".yaml"), r.out);
      auto v = imgtool::run(
          {"kubernetes-validate", "--strict", "-k", runconf::kK8sVersion, (d.path / (kind + ".yaml")).string()});
      CHECK_MESSAGE(v.ok(), kind << ": " << v.out << v.err);
      CHECK(v.out.find("passed") != std::string::npos);
    }
    // A broken document is caught by the same validator (the check has teeth).
    write_file_atomic(d.path / "bad.yaml",
                      "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {backoffLimit: \"four\", template: "
                      "{spec: {containers: []}}}\n");
    CHECK_FALSE(
        imgtool::run({"kubernetes-validate", "--strict", "-k", runconf::kK8sVersion, (d.path / "bad.yaml").string()})
            .ok());
  }
  SUBCASE("refusals and bad input: exit 2, one line") {
    auto cpu_gpu = cli({"run-config", kCpu, "--profile", "ocr", "--set", "gpus=1", "--format", "docker"});
    CHECK(cpu_gpu.exit_code == 2);
    CHECK(lines_of(cpu_gpu.err) == 1);
    CHECK(cpu_gpu.err.find("--set gpus=1: gpus: expected no GPU for " + std::string(kCpu) +
                           " (label io.imgtool.variant=cpu") != std::string::npos);
    CHECK(cli({"run-config", kCpu, "--profile", "ocr", "--set", "gpus=0"}).exit_code == 0);
    auto zero = cli({"run-config", kGpu, "--profile", "ocr", "--set", "gpus=0"});
    CHECK(zero.exit_code == 2);
    CHECK(zero.err.find("--set gpus=0: gpus: expected at least one GPU") != std::string::npos);
    auto volta = cli({"run-config", kGpu, "--profile", "ocr", "--set", "gpu_model=B200"});
    CHECK(volta.exit_code == 2);
    CHECK(volta.err.find("Blackwell") != std::string::npos);
    for (auto set : {"shm_size=8gb", "memory=-1", "nosuchkey=1"}) {
      auto r = cli({"run-config", kGpu, "--profile", "ocr", "--set", set});
      CHECK(r.exit_code == 2);
      CHECK(lines_of(r.err) == 1);
      CHECK(r.out.empty());
    }
    auto missing = cli({"run-config", kGpu, "--profile", "no-such-layer"});
    CHECK(missing.exit_code == 2);
    CHECK(missing.err.find("no-such-layer") != std::string::npos);
  }
  imgtool::run({"docker", "rmi", "-f", kGpu, kCpu});
}

TEST_CASE("smoke under a run profile: the probe reads back memlock, stack, /dev/shm and the user") {
  std::string img = labelled("imgtool-test/paddle-cpu-variant:3.2.0", paddle_cpu_image(), "cpu");
  ScratchDir d("run-smoke");
  std::string profile = (d.path / "smoke.yaml").string();
  // memlock 8m, not the base profile's unlimited: this machine's dockerd has an 8 MiB hard RLIMIT_MEMLOCK,
  // so runc refuses more ("error setting rlimit type 8: operation not permitted").
  write_file_atomic(profile,
                    "extends: base\ngpus: 0\nshm_size: 2g\nulimit:\n  memlock: 8m\n  stack: 67108864\nuser: "
                    "\"1000:1000\"\nenv:\n  HOME: /tmp\n");
  auto r = cli({"smoke", img, "--profile", profile, "--json", "--no-record"});
  auto j = nlohmann::json::parse(r.out);
  auto rs = j["probe"]["run_settings"];
  CHECK(rs["status"] == "ok");
  CHECK(rs["memlock"]["value"] == 8 << 20);
  CHECK(rs["stack"]["value"] == 67108864);
  CHECK(rs["shm"]["value"].get<int64_t>() >= (int64_t(2) << 30));
  CHECK(rs["user"]["uid"] == 1000);
  std::string argv;
  for (auto& a : j["docker"]["argv"]) argv += a.get<std::string>() + " ";
  CHECK(argv.find("--shm-size 2g --ulimit memlock=8388608 --ulimit stack=67108864 --user 1000:1000") !=
        std::string::npos);
  // Given less than the profile promises (--shm-size wins over the profile): a warning with the fix.
  auto low = cli(
      {"smoke", img, "--profile", profile, "--shm-size", "64m", "--set", "ulimit.stack=128m", "--json", "--no-record"});
  auto lj = nlohmann::json::parse(low.out)["probe"]["run_settings"];
  CHECK(lj["status"] == "warn");
  CHECK(lj["shm"]["fix"].get<std::string>().find("--shm-size") != std::string::npos);
  CHECK(lj["stack"]["status"] == "ok");  // the --set stack is what docker was given, and what the probe expected
}

TEST_CASE("run-config --format k8s: least privilege, and kubernetes-validate accepts it") {
  build_labelled(kGpu, {{"io.imgtool.variant", "gpu"},
                        {"io.imgtool.cuda", "12.6"},
                        {"io.imgtool.paddle", "3.2.0"},
                        {"io.imgtool.min-driver", "525.60.13"}});
  ScratchDir d("run-config-privilege");
  for (std::string kind : {"job", "deployment"}) {
    auto r = cli({"run-config", kGpu, "--profile", "ocr", "--format", "k8s", "--kind", kind});
    REQUIRE(r.exit_code == 0);
    YAML::Node pod = YAML::Load(r.out)["spec"]["template"]["spec"];
    CHECK_FALSE(pod["automountServiceAccountToken"].as<bool>());
    CHECK(pod["securityContext"]["seccompProfile"]["type"].as<std::string>() == "RuntimeDefault");
    CHECK(pod["securityContext"]["runAsNonRoot"].as<bool>());
    YAML::Node sc = pod["containers"][0]["securityContext"];
    CHECK_FALSE(sc["allowPrivilegeEscalation"].as<bool>());
    CHECK(sc["capabilities"]["drop"][0].as<std::string>() == "ALL");
    write_file_atomic(d.path / (kind + ".yaml"), r.out);
    auto v = imgtool::run(
        {"kubernetes-validate", "--strict", "-k", runconf::kK8sVersion, (d.path / (kind + ".yaml")).string()});
    CHECK_MESSAGE(v.ok(), kind << ": " << v.out << v.err);
  }
}
