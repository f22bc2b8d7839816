// The one Docker engine of a run. The docker CLI (builder's `docker build`, the
// smoke's `docker run`, verify's inspect/rm) and the Engine API client (the
// docker-daemon: transport: inspect, save, load) must reach the SAME engine,
// whatever `docker context` or the environment says:
//   engine_socket()  $DOCKER_HOST when it is unix://PATH, else /var/run/docker.sock;
//                    InputError for another scheme (tcp://, ssh://): the Engine API
//                    client speaks to a Unix socket only, and silently using the
//                    default socket would split one run over two engines.
//   run_docker()     core's run() for a docker CLI argv, with DOCKER_HOST set to
//                    that socket (it overrides any `docker context`).
#pragma once
#include <string>
#include <vector>

#include "core/process.h"

namespace imgtool {

std::string engine_socket();

// Same signature as run(): a CommandRunner for the docker CLI.
RunResult run_docker(const std::vector<std::string>& argv, const RunOptions& opt = {});

}  // namespace imgtool
