#include "core/engine.h"

#include <cstdlib>

#include "core/error.h"

namespace imgtool {

std::string engine_socket() {
  const char* h = std::getenv("DOCKER_HOST");
  if (!h || !*h) return "/var/run/docker.sock";
  std::string host = h;
  if (host.rfind("unix://", 0) == 0 && host.size() > 7) return host.substr(7);
  throw InputError(
      "DOCKER_HOST: expected unix:///PATH/TO/docker.sock (imgtool talks to one engine over its Unix "
      "socket), found '" +
      host + "'");
}

}  // namespace imgtool
