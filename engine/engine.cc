#include "engine/engine.h"

#include "engine/docker_engine.h"

namespace imgtool::engine {

std::vector<std::optional<ImageInfo>> Engine::inspect_all(const std::vector<std::string>& refs) {
  std::vector<std::optional<ImageInfo>> out;
  out.reserve(refs.size());
  for (const auto& r : refs) out.push_back(inspect(r));
  return out;
}

std::vector<std::string> build_argv(const BuildRequest& r, const fs::path& iidfile) {
  // --force-rm: the classic builder keeps a failed step's container otherwise (one per failed
  // nightly cell, piling up on the build host); BuildKit ignores the flag.
  std::vector<std::string> a = {"docker", "build", "--force-rm", "--file", r.dockerfile.string(), "--tag", r.image,
                                "--iidfile", iidfile.string()};
  if (!r.target.empty()) a.insert(a.end(), {"--target", r.target});
  for (auto& [k, v] : r.build_args) a.insert(a.end(), {"--build-arg", k + "=" + v});
  for (auto& [k, v] : r.labels) a.insert(a.end(), {"--label", k + "=" + v});
  a.push_back(r.context.string());
  return a;
}

std::vector<std::string> run_argv(const RunRequest& r) {
  std::vector<std::string> a = {"docker", "run", "--rm", "--name", r.name};
  if (!r.gpus.empty() && r.gpus != "none") a.insert(a.end(), {"--gpus", r.gpus});
  if (!r.shm_size.empty()) a.insert(a.end(), {"--shm-size", r.shm_size});
  a.insert(a.end(), r.flags.begin(), r.flags.end());
  for (const auto& m : r.mounts) a.insert(a.end(), {"-v", m.host + ":" + m.container + (m.read_only ? ":ro" : "")});
  if (!r.entrypoint.empty()) a.insert(a.end(), {"--entrypoint", r.entrypoint});
  a.push_back(r.image);
  a.insert(a.end(), r.args.begin(), r.args.end());
  return a;
}

Engine& local_engine() {
  static DockerEngine e;
  return e;
}

}  // namespace imgtool::engine
