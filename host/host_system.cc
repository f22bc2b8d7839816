#include "host/host_system.h"

#include <fstream>
#include <sstream>

#include "core/engine.h"
#include "engine/engine.h"

namespace imgtool::host {

std::optional<std::string> SystemHost::read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

RunResult SystemHost::run(const std::vector<std::string>& argv, int timeout_s) {
  if (!have_program(argv.at(0))) return RunResult{127, false, "", argv[0] + ": command not found"};
  RunOptions o;
  o.timeout = std::chrono::seconds(timeout_s);
  o.max_output = engine::kMaxRunOutput;  // doctor's container check: the engine's cap on what a container prints
  // docker: the run's one engine (core/engine.h), whatever `docker context` says, as engine/ pins it.
  if (argv.at(0) == "docker") o.env["DOCKER_HOST"] = "unix://" + engine_socket();
  return imgtool::run(argv, o);
}

}  // namespace imgtool::host
