// The builder's only door to the Docker engine. Everything the build driver
// needs from docker is one of these calls, so a unit test can replace the
// engine (fault injection: a transient failure, then success) while the
// integration tests use the real one through CliDockerRunner.
#pragma once
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "core/process.h"

namespace imgtool::builder {

namespace fs = std::filesystem;

// One `docker build` invocation.
struct BuildRequest {
  fs::path context;                               // build context folder
  fs::path dockerfile;                            // usually context/Dockerfile
  std::string image;                              // name:tag to tag the result with
  std::string target;                             // stage to stop at; empty = the last stage
  std::map<std::string, std::string> build_args;  // --build-arg K=V
  std::map<std::string, std::string> labels;     // --label K=V (added after the Dockerfile's own)
  std::chrono::seconds timeout{3600};             // the build is killed after this
  fs::path log_path;                              // output is appended here
};

// What one build produced.
struct BuildResult {
  RunResult run;         // exit code, output, timed_out
  std::string image_id;  // "sha256:…" when the build succeeded
  bool ok() const { return run.ok() && !image_id.empty(); }
};

// A local image as the engine reports it.
struct LocalImage {
  std::string id;                                // "sha256:…" (config digest)
  std::map<std::string, std::string> labels;
};

class DockerRunner {
 public:
  virtual ~DockerRunner() = default;
  // Runs one build. Never throws for a failed build: the result carries the
  // exit code, the output, and timed_out.
  virtual BuildResult build(const BuildRequest& r) = 0;
  // The local image named `ref`, or nullopt when the engine has none.
  virtual std::optional<LocalImage> inspect(const std::string& ref) = 0;
  // "buildkit" or "classic": the builder this runner drives.
  virtual std::string builder_kind() const = 0;
};

// The real engine through the docker CLI (core/process.h). Uses BuildKit when
// the client has the buildx plugin, the classic builder otherwise
// (DOCKER_BUILDKIT=0/1 is always set explicitly, never left to the client).
class CliDockerRunner : public DockerRunner {
 public:
  CliDockerRunner();
  BuildResult build(const BuildRequest& r) override;
  std::optional<LocalImage> inspect(const std::string& ref) override;
  std::string builder_kind() const override { return buildkit_ ? "buildkit" : "classic"; }

 private:
  bool buildkit_;
};

// True when `docker buildx version` works (the BuildKit client is present).
bool docker_has_buildkit();

// The argv of `docker build` for a request (no timeout wrapper); exposed for tests.
std::vector<std::string> docker_build_argv(const BuildRequest& r, const fs::path& iidfile);

}  // namespace imgtool::builder
