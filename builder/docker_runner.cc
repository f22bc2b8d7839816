#include "builder/docker_runner.h"

#include <unistd.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "core/engine.h"
#include "core/error.h"
#include "core/fs.h"

namespace imgtool::builder {

bool docker_has_buildkit() {
  if (const char* v = std::getenv("IMGTOOL_BUILDKIT"); v && *v) return std::string(v) == "1";
  return run_docker({"docker", "buildx", "version"}).ok();
}

CliDockerRunner::CliDockerRunner() : buildkit_(docker_has_buildkit()) {}

std::vector<std::string> docker_build_argv(const BuildRequest& r, const fs::path& iidfile) {
  std::vector<std::string> a = {"docker", "build", "--file", r.dockerfile.string(), "--tag", r.image,
                                "--iidfile", iidfile.string()};
  if (!r.target.empty()) a.insert(a.end(), {"--target", r.target});
  for (auto& [k, v] : r.build_args) a.insert(a.end(), {"--build-arg", k + "=" + v});
  for (auto& [k, v] : r.labels) a.insert(a.end(), {"--label", k + "=" + v});
  a.push_back(r.context.string());
  return a;
}

namespace {
fs::path iid_path() {
  static std::atomic<int> n{0};
  return fs::temp_directory_path() / ("imgtool-iid-" + std::to_string(::getpid()) + "-" + std::to_string(++n));
}
}  // namespace

// The timeout is enforced by coreutils timeout(1) rather than RunOptions::timeout:
// Boost 1.74's wait_for waits on SIGCHLD, which with -j N threads can be taken
// by another thread, leaving a finished build unnoticed until the deadline.
BuildResult CliDockerRunner::build(const BuildRequest& r) {
  fs::path iid = iid_path();
  auto argv = docker_build_argv(r, iid);
  argv.insert(argv.begin(), {"timeout", "--kill-after=30", std::to_string(r.timeout.count())});
  RunOptions o{.log_path = r.log_path.string(), .env = {{"DOCKER_BUILDKIT", buildkit_ ? "1" : "0"}}};
  BuildResult res{run_docker(argv, o), ""};
  if (res.run.exit_code == 124 || res.run.exit_code == 137) res.run.timed_out = true;
  if (res.run.ok() && fs::exists(iid)) res.image_id = read_file(iid);
  std::error_code ec;
  fs::remove(iid, ec);
  return res;
}

std::optional<LocalImage> CliDockerRunner::inspect(const std::string& ref) {
  // No RunOptions::timeout here either (see build()): inspect answers from local metadata.
  auto r = run_docker({"docker", "image", "inspect", "--format", "{{json .}}", ref});
  if (!r.ok()) return std::nullopt;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (j.is_discarded()) throw Error("docker image inspect " + ref + ": expected JSON, found: " + r.out.substr(0, 200));
  LocalImage img;
  img.id = j.value("Id", "");
  auto cfg = j.value("Config", nlohmann::json::object());
  if (cfg.contains("Labels") && cfg["Labels"].is_object())
    for (auto& [k, v] : cfg["Labels"].items()) img.labels[k] = v.get<std::string>();
  return img;
}

}  // namespace imgtool::builder
