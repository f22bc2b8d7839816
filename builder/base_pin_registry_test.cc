// registry_digest, the CLI's RegistryDigest, against a REAL docker-registry on loopback
// (tests/registry_fixture.h): a base the engine lacks is pinned by the manifest digest the registry
// gives its tag now; a tag the registry lacks is one line and no pin. The engine is the double (the
// test is about the registry's answer; the build that pulls the pin is the engine's business).
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "builder/base_pin.h"
#include "core/error.h"
#include "dockerfiles/test_cells.h"
#include "engine/fake_engine.h"
#include "image/registry.h"
#include "tests/registry_fixture.h"

using namespace imgtool;
using namespace imgtool::testing;
using nlohmann::json;

namespace {

// A tiny image (one opaque layer) pushed under `tag`; returns its manifest digest.
std::string push(image::Registry& reg, const std::string& repo, const std::string& tag, const std::string& which) {
  auto layer = reg.put_blob(repo, "layer of " + which, image::media::kOciLayerGzip);
  auto config = reg.put_blob(
      repo,
      json{{"architecture", "amd64"}, {"os", "linux"}, {"rootfs", {{"type", "layers"}, {"diff_ids", json::array()}}}}
          .dump(),
      image::media::kOciConfig);
  json m{{"schemaVersion", 2}, {"mediaType", image::media::kOciManifest}, {"config", config}, {"layers", {layer}}};
  image::Manifest man{m.dump(), image::media::kOciManifest};
  reg.put_manifest(repo, tag, man.raw, man.media_type);
  return man.digest();
}

}  // namespace

TEST_CASE("registry_digest asks the real registry what a base's tag is now; pin_bases pins FROM to it") {
  RegistryServer server(RegistryServer::Mode::kHttp, "base-pin");
  image::Registry reg(server.host(), server.options());
  std::string first = push(reg, "base/debian", "bookworm", "one");
  const std::string base = server.host() + "/base/debian:bookworm";
  CHECK(builder::registry_digest(base) == first);

  engine::FakeEngine engine;  // the engine double: it lacks the base
  matrix::Plan plan;
  matrix::Cell c = dockerfiles::testing::gpu_cell();
  c.base_image = base;
  c.base_digest.clear();
  plan.kept = {c};
  auto lines = builder::pin_bases(plan, engine, builder::registry_digest);
  CHECK(plan.kept[0].base_from == base + "@" + first);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "base " + base + ": registry digest " + first +
                        " (asked the registry: the engine lacks it; the build pulls it by digest)");

  std::string moved = push(reg, "base/debian", "bookworm", "two");  // the tag moves: the next run's pin moves
  REQUIRE(moved != first);
  CHECK(builder::registry_digest(base) == moved);

  CHECK_THROWS_AS(builder::registry_digest(server.host() + "/base/debian:no-such-tag"), Error);
  matrix::Plan absent;
  c.base_image = server.host() + "/base/debian:no-such-tag";
  absent.kept = {c};
  auto l = builder::pin_bases(absent, engine, builder::registry_digest);
  CHECK(absent.kept[0].base_from.empty());
  REQUIRE(l.size() == 1);
  CHECK(l[0].find(": not pinned, the engine lacks it and the registry did not answer: ") != std::string::npos);
}
