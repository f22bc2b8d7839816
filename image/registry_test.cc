// Registry client against a real docker-registry in its three set-ups.
#include "image/registry.h"

#include <doctest/doctest.h>

#include "core/hash.h"
#include "tests/registry_fixture.h"

using namespace imgtool;
using namespace imgtool::image;
using imgtool::testing::RegistryServer;

namespace {

// A tiny OCI image: config + one (uncompressed, fine for the registry) layer.
Manifest push_tiny_image(Registry& reg, const std::string& repo, const std::string& tag) {
  Descriptor config = reg.put_blob(
      repo, R"({"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}})", media::kOciConfig);
  Descriptor layer = reg.put_blob(repo, std::string(1000, 'x'), media::kOciLayerTar);
  nlohmann::json m{{"schemaVersion", 2}, {"mediaType", media::kOciManifest}, {"config", config}, {"layers", {layer}}};
  Manifest man{m.dump(), media::kOciManifest};
  reg.put_manifest(repo, tag, man.raw, man.media_type);
  return man;
}

void round_trip(RegistryServer& srv) {
  Registry reg(srv.host(), srv.options());
  reg.ping();
  Manifest m = push_tiny_image(reg, "test/tiny", "v1");
  CHECK(reg.resolve("test/tiny", "v1") == m.digest());
  Manifest got = reg.get_manifest("test/tiny", m.digest());
  CHECK(got.raw == m.raw);
  CHECK(got.media_type == media::kOciManifest);
  CHECK(reg.get_blob_bytes("test/tiny", m.layers()[0]) == std::string(1000, 'x'));
  CHECK(reg.list_tags("test/tiny") == std::vector<std::string>{"v1"});
  CHECK(reg.head_blob("test/tiny", m.layers()[0].digest) == 1000);
  CHECK_FALSE(reg.head_manifest("test/tiny", "nope"));
}

}  // namespace

TEST_CASE("registry client: plain http on loopback") {
  RegistryServer srv(RegistryServer::Mode::kHttp, "http");
  round_trip(srv);
  Registry reg(srv.host());
  SUBCASE("referrers fall back to the sha256-<hex> tag schema") {
    Manifest m = push_tiny_image(reg, "test/ref", "v1");
    CHECK(reg.referrers("test/ref", m.digest()).empty());
    nlohmann::json idx{{"schemaVersion", 2},
                       {"mediaType", media::kOciIndex},
                       {"manifests", {Descriptor{media::kOciManifest, m.digest(), (int64_t)m.raw.size()}}}};
    reg.put_manifest("test/ref", "sha256-" + m.digest().substr(7), idx.dump(), media::kOciIndex);
    CHECK(reg.referrers("test/ref", m.digest()).size() == 1);
  }
  SUBCASE("cross-repository mount") {
    Manifest m = push_tiny_image(reg, "test/a", "v1");
    CHECK(reg.mount_blob("test/b", m.layers()[0].digest, "test/a"));
    CHECK(reg.head_blob("test/b", m.layers()[0].digest));
  }
  SUBCASE("chunked upload when asked") {
    RegistryOptions o;
    o.chunked_upload = true;
    o.chunk_size = 300;
    Registry chunked(srv.host(), o);
    Descriptor d = chunked.put_blob("test/chunks", std::string(1000, 'y'), media::kOciLayerTar);
    CHECK(chunked.get_blob_bytes("test/chunks", d) == std::string(1000, 'y'));
  }
  SUBCASE("a wrong digest is rejected on read") {
    Manifest m = push_tiny_image(reg, "test/c", "v1");
    Descriptor wrong = m.layers()[0];
    wrong.size = 999;
    CHECK_THROWS_WITH_AS(reg.get_blob_bytes("test/c", wrong), doctest::Contains("longer than"), Error);
  }
}

TEST_CASE("registry client: htpasswd Basic auth") {
  RegistryServer srv(RegistryServer::Mode::kBasicAuth, "basic");
  round_trip(srv);
  RegistryOptions bad = srv.options();
  bad.credentials->password = "wrong-password";
  Registry reg(srv.host(), bad);
  try {
    reg.list_tags("test/tiny");
    FAIL("expected an authentication error");
  } catch (const RegistryError& e) {
    CHECK(e.status == 401);
    CHECK(std::string(e.what()).find("authentication failed") != std::string::npos);
    CHECK(std::string(e.what()).find("wrong-password") == std::string::npos);
  }
}

TEST_CASE("registry client: TLS with a private CA") {
  RegistryServer srv(RegistryServer::Mode::kTls, "tls");
  round_trip(srv);
  Registry untrusted(srv.host());
  CHECK_THROWS_WITH_AS(untrusted.ping(), doctest::Contains("TLS verification failed"), Error);
}

TEST_CASE("registry fixture: kill and restart keep the storage") {
  RegistryServer srv(RegistryServer::Mode::kHttp, "restart");
  Registry reg(srv.host());
  Manifest m = push_tiny_image(reg, "test/r", "v1");
  srv.kill();
  RegistryOptions quick;
  quick.attempts = 1;
  Registry down(srv.host(), quick);
  CHECK_THROWS_AS(down.ping(), Error);
  srv.start();
  CHECK(reg.resolve("test/r", "v1") == m.digest());
}
