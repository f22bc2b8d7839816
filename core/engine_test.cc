// One engine per run: which socket the engine seam (engine/) resolves.
#include "core/engine.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "core/error.h"

using namespace imgtool;

namespace {

// Sets DOCKER_HOST for one test, restoring it afterwards.
struct DockerHost {
  std::optional<std::string> saved;
  explicit DockerHost(const char* value) {
    if (const char* v = std::getenv("DOCKER_HOST")) saved = v;
    value ? setenv("DOCKER_HOST", value, 1) : unsetenv("DOCKER_HOST");
  }
  ~DockerHost() { saved ? setenv("DOCKER_HOST", saved->c_str(), 1) : unsetenv("DOCKER_HOST"); }
};

}  // namespace

TEST_CASE("engine: $DOCKER_HOST unix://PATH is the run's one engine; default /var/run/docker.sock") {
  {
    DockerHost h(nullptr);
    CHECK(engine_socket() == "/var/run/docker.sock");
  }
  DockerHost h("unix:///tmp/imgtool-test-engine/docker.sock");
  CHECK(engine_socket() == "/tmp/imgtool-test-engine/docker.sock");
  // The engine seam (engine/engine_test.cc) points its CLI and API calls at this socket.
}

TEST_CASE("engine: a DOCKER_HOST the Engine API client cannot reach is refused, not replaced by the default socket") {
  DockerHost h("tcp://10.0.0.1:2375");  // before: the API silently used /var/run/docker.sock, the CLI tcp://
  CHECK_THROWS_AS(engine_socket(), InputError);
}
