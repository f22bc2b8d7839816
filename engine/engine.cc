#include "engine/engine.h"

#include <unistd.h>

#include <algorithm>

#include "core/error.h"
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
  std::vector<std::string> a = {"docker", "build", "--force-rm", "--file",        r.dockerfile.string(),
                                "--tag",  r.image, "--iidfile",  iidfile.string()};
  if (!r.target.empty()) a.insert(a.end(), {"--target", r.target});
  if (r.no_cache) a.push_back("--no-cache");
  for (auto& [k, v] : r.build_args) a.insert(a.end(), {"--build-arg", k + "=" + v});
  for (auto& [k, v] : r.labels) a.insert(a.end(), {"--label", k + "=" + v});
  a.push_back(r.context.string());
  return a;
}

namespace {

// The request flags the fence admits, each with the values it may take (nullptr: any value). A
// flag not here is refused: --cap-add, --privileged, --network, --pid, --device, --security-opt,
// -v/--mount, --runtime, --userns, --cgroupns, --pids-limit, --log-driver, …
struct AdmittedFlag {
  const char* flag;
  bool (*value_ok)(const std::string&);
};
bool any_value(const std::string&) { return true; }
bool private_ipc(const std::string& v) { return v == "private" || v == "shareable" || v == "none"; }
const AdmittedFlag kAdmittedFlags[] = {
    {"--ulimit", any_value},   {"--user", any_value},    {"-e", any_value},
    {"--env", any_value},      {"--cpus", any_value},    {"--memory", any_value},
    {"--shm-size", any_value}, {"--workdir", any_value}, {"--ipc", private_ipc},
};

bool admitted(const std::string& flag, const std::string& value) {
  for (const auto& f : kAdmittedFlags)
    if (flag == f.flag) return f.value_ok(value);
  return false;
}

}  // namespace

const std::vector<std::string>& isolation_flags() {
  static const std::vector<std::string> flags = {"--network",      "none",
                                                 "--cap-drop",     "ALL",
                                                 "--security-opt", "no-new-privileges",
                                                 "--pids-limit",   std::to_string(kPidsLimit),
                                                 "--log-driver",   "none"};
  return flags;
}

AdmittedFlags admit_flags(const std::vector<std::string>& flags) {
  AdmittedFlags out;
  for (size_t i = 0; i < flags.size(); i += 2) {
    if (i + 1 == flags.size()) {
      out.refused.push_back(flags[i]);
      break;
    }
    if (admitted(flags[i], flags[i + 1]))
      out.admitted.insert(out.admitted.end(), {flags[i], flags[i + 1]});
    else
      out.refused.push_back(flags[i] + " " + flags[i + 1]);
  }
  return out;
}

uint64_t default_memory_limit() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return uint64_t{4} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4 * 3;
}

std::vector<std::string> run_argv(const RunRequest& r) {
  AdmittedFlags f = admit_flags(r.flags);
  if (!f.refused.empty())
    throw InputError("docker run " + r.image +
                     ": expected flags that keep the container's isolation (--ulimit, --user, "
                     "--env, --cpus, --memory, --shm-size, --workdir, --ipc private), found '" +
                     f.refused.front() + "'");
  std::vector<std::string> a = {"docker", "run", "--rm", "--name", r.name};
  a.insert(a.end(), isolation_flags().begin(), isolation_flags().end());
  if (!r.gpus.empty() && r.gpus != "none") a.insert(a.end(), {"--gpus", r.gpus});
  if (!r.shm_size.empty()) a.insert(a.end(), {"--shm-size", r.shm_size});
  a.insert(a.end(), f.admitted.begin(), f.admitted.end());
  if (std::find(f.admitted.begin(), f.admitted.end(), "--memory") == f.admitted.end())
    a.insert(a.end(), {"--memory", std::to_string(default_memory_limit())});
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
