#include "smoke/smoke_diagnosis.h"

#include <doctest/doctest.h>

using namespace imgtool::smoke;

TEST_CASE("no NVIDIA runtime: could not select device driver") {
  auto d = diagnose_docker_failure(
      "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n");
  REQUIRE(d);
  CHECK(d->code == "nvidia_runtime_missing");
  CHECK(d->fix.find("nvidia-ctk runtime configure") != std::string::npos);
  CHECK(d->fix.find("restart docker") != std::string::npos);
  CHECK(d->evidence.find("could not select device driver") != std::string::npos);
}

TEST_CASE("driver too old: unsatisfied condition cuda>=X names the version") {
  auto d = diagnose_docker_failure(
      "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: "
      "error running prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
      "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a "
      "newer version, or use an earlier cuda container: unknown.\n");
  REQUIRE(d);
  CHECK(d->code == "driver_too_old");
  CHECK(d->summary.find("cuda>=12.8") != std::string::npos);
  CHECK(d->fix.find("CUDA 12.8") != std::string::npos);
  CHECK(d->fix.find("NVIDIA_DISABLE_REQUIRES") != std::string::npos);
}

TEST_CASE("other known failures") {
  CHECK(diagnose_docker_failure("unsatisfied condition: brand=tesla")->code == "driver_requirement");
  CHECK(diagnose_docker_failure("nvidia-container-cli: initialization error: nvml error: driver not loaded")->code ==
        "driver_not_loaded");
  CHECK(diagnose_docker_failure("docker: invalid size: 'lots'.")->code == "bad_shm_size");
  auto d = diagnose_docker_failure("Cannot connect to the Docker daemon at unix:///var/run/docker.sock.");
  CHECK(d->retryable);
  CHECK(diagnose_docker_failure("exec: \"python3\": executable file not found in $PATH: unknown")
            ->summary.find("python3") != std::string::npos);
  CHECK_FALSE(diagnose_docker_failure("something new"));
}

TEST_CASE("generic failure and timeout") {
  CHECK(generic_docker_failure(-1, true, "").code == "timeout");
  auto g = generic_docker_failure(125, false, "weird");
  CHECK(g.code == "docker_run_failed");
  CHECK(g.summary.find("125") != std::string::npos);
}

TEST_CASE("hostile stderr: a megabyte line the image printed is skipped, docker's own line is still diagnosed") {
  // stderr carries what the image printed. One rule's "[^"]*" over a megabyte of it made
  // libstdc++'s regex recurse once per character and overflow the stack.
  std::string junk = "could not select device driver \"" + std::string(1 << 20, 'a');
  CHECK_FALSE(diagnose_docker_failure(junk));
  auto d = diagnose_docker_failure(junk +
                                   "\ndocker: Error response from daemon: could not select device driver \"\" "
                                   "with capabilities: [[gpu]].\n");
  REQUIRE(d);
  CHECK(d->code == "nvidia_runtime_missing");
  CHECK(d->evidence.rfind("docker: Error response", 0) == 0);
}
