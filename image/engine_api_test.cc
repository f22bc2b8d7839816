// The one Engine API client (image/engine_api.h) against a stand-in engine on a Unix socket
// (image/testing/engine_socket.py): JSON, 404, engine errors in one line, streams, uploads, and an
// engine that is not there.
#include "image/engine_api.h"

#include <doctest/doctest.h>

#include "core/error.h"
#include "image/blob.h"
#include "image/testing/python_server.h"
#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::image;

namespace {

struct StandIn {
  imgtool::testing::ScratchDir dir{"engine-api"};
  std::string socket = (dir.path / "docker.sock").string();
  imgtool::image::testing::PythonServer server{"engine_socket.py", dir.path, "engine", {"--socket", socket}};
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("engine API: JSON answers, 404 as nullopt, engine errors named in one line") {
  StandIn engine;
  EngineApi api(engine.socket);
  CHECK(api.socket() == engine.socket);
  auto present = api.get_json("/images/present/json", "docker image inspect present");
  REQUIRE(present);
  CHECK(present->at("Id") == "sha256:" + std::string(64, 'a'));
  CHECK(api.get_json("/images/list/json", "docker image ls")->is_array());
  CHECK_FALSE(api.get_json("/images/missing/json", "docker image inspect missing"));
  std::string broken = error_of([&] { api.get_json("/images/broken/json", "docker image inspect broken"); });
  CHECK(broken == "docker image inspect broken failed: HTTP 500 engine broke");  // the engine's message, one line
  std::string not_json = error_of([&] { api.get_json("/images/notjson/json", "docker image inspect notjson"); });
  CHECK(not_json == "docker image inspect notjson: expected JSON from the engine, found 'not json at all'");
}

TEST_CASE("engine API: a stream arrives whole; a refused one is an error before any byte") {
  StandIn engine;
  EngineApi api(engine.socket);
  size_t bytes = 0;
  api.get_stream("/images/present/get", "docker save present", [&](const char*, size_t n) {
    bytes += n;
    return true;
  });
  CHECK(bytes == 300000);
  bool called = false;
  std::string refused = error_of([&] {
    api.get_stream("/images/missing/get", "docker save missing", [&](const char*, size_t) { return called = true; });
  });
  CHECK(refused == "docker save missing failed: HTTP 404 No such image: missing");
  CHECK_FALSE(called);
}

TEST_CASE("engine API: an upload, and the engine's late {\"error\"} after a 200") {
  StandIn engine;
  EngineApi api(engine.socket);
  StringReader good("a tar of sorts");
  api.post("/images/load?quiet=1", "docker load", good, 14, "application/x-tar");
  StringReader bad("bad tar");
  std::string late = error_of([&] { api.post("/images/load?quiet=1", "docker load", bad, 7, "application/x-tar"); });
  CHECK(late.rfind("docker load failed: HTTP 200 ", 0) == 0);
  CHECK(late.find("bad tar") != std::string::npos);
}

TEST_CASE("engine API: no engine at the socket is a retryable error naming it, with the fix") {
  EngineApi api("/tmp/imgtool-no-engine-here.sock");
  try {
    api.get_json("/images/x/json", "docker image inspect x");
    FAIL("reached an engine");
  } catch (const Error& e) {
    std::string what = e.what();
    CHECK(what.rfind("cannot talk to the Docker engine at unix:///tmp/imgtool-no-engine-here.sock: ", 0) == 0);
    CHECK(what.find("fix: start dockerd or set DOCKER_HOST") != std::string::npos);
    CHECK(e.retryable);
  }
}
