// Which Docker engine a run talks to. The seam itself — every docker call of
// the builder, the smoke and verify — is engine/engine.h; it resolves this
// socket ONCE and points both its docker CLI children (DOCKER_HOST, overriding
// any `docker context`) and its Engine API client (the docker-daemon:
// transport) at it, so one run can never be split over two engines:
//   engine_socket()  $DOCKER_HOST when it is unix://PATH, else /var/run/docker.sock;
//                    InputError for another scheme (tcp://, ssh://): the Engine API
//                    client speaks to a Unix socket only, and silently using the
//                    default socket would split one run over two engines.
#pragma once
#include <string>

namespace imgtool {

std::string engine_socket();

}  // namespace imgtool
