// Bearer tokens end to end: a REAL docker-registry in `auth: token:` mode
// (realm/service/issuer/rootcertbundle) and a token server on loopback
// (image/testing/token_server.py, ES256 JWTs signed with a key made here by
// openssl), so the client's challenge -> token -> scoped retry really runs:
// with a password (GET + Basic), with an identity token (the OAuth2
// refresh-token POST), anonymously, and with a wrong password; and the scopes
// a token asks for: the challenge's (a manifest DELETE needs `delete`) and a
// cross-repository mount's `pull` on its source.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "core/hash.h"
#include "core/process.h"
#include "image/registry.h"
#include "image/testing/python_server.h"
#include "tests/registry_fixture.h"

using namespace imgtool;
using namespace imgtool::image;
using imgtool::image::testing::PythonServer;
using imgtool::testing::RegistryServer;
using nlohmann::json;

namespace {

const char* kService = "imgtool-test-registry";
const char* kIssuer = "imgtool-test-issuer";

std::filesystem::path scratch() {
  std::string t = (std::filesystem::temp_directory_path() / "imgtool-bearer-XXXXXX").string();
  std::filesystem::path p = ::mkdtemp(t.data());
  std::filesystem::create_directories(p / "docker");
  ::setenv("DOCKER_CONFIG", (p / "docker").c_str(), 1);  // no machine credentials take part
  return p;
}

std::filesystem::path make_signing_cert(const std::filesystem::path& dir) {
  RunOptions o;
  o.cwd = dir.string();
  auto r = run({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "token.key", "-out", "token.crt", "-days", "2", "-subj", "/CN=imgtool test token issuer"},
               o);
  if (!r.ok()) throw Error("openssl failed: " + r.err);
  return dir;
}

std::vector<std::string> token_args(const std::filesystem::path& dir) {
  json users{{"passwords", {{"pusher", "pusher-password"}, {"owner", "owner-password"}}},
             {"refresh_tokens", {{"refresh-token-of-pusher", "pusher"}}},
             {"grants",
              {{"pusher",
                {{"test/pw", {"pull", "push"}},
                 {"test/idt", {"pull", "push"}},
                 {"test/src", {"pull", "push"}},
                 {"test/dst", {"pull", "push"}},
                 {"test/del", {"pull", "push", "delete"}}}},
               {"owner", {{"test/secret", {"pull", "push"}}}}}}};
  std::ofstream(dir / "users.json") << users.dump();
  return {"--key",     (dir / "token.key").string(),
          "--cert",    (dir / "token.crt").string(),
          "--issuer",  kIssuer,
          "--service", kService,
          "--users",   (dir / "users.json").string(),
          "--log",     (dir / "tokens.jsonl").string()};
}

std::string token_auth_config(int token_port, const std::filesystem::path& dir) {
  return "auth:\n  token:\n    realm: http://127.0.0.1:" + std::to_string(token_port) +
         "/token\n    service: " + kService + "\n    issuer: " + kIssuer +
         "\n    rootcertbundle: " + (dir / "token.crt").string() + "\n";
}

// docker-registry in token mode + its token server, in a private folder.
struct TokenRegistry {
  std::filesystem::path dir = make_signing_cert(scratch());
  PythonServer tokens{"token_server.py", dir, "tokens", token_args(dir)};
  RegistryServer registry{RegistryServer::Mode::kHttp, "token", token_auth_config(tokens.port(), dir)};
  ~TokenRegistry() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  std::vector<json> token_requests() const {
    std::vector<json> out;
    std::ifstream in(dir / "tokens.jsonl");
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(json::parse(line));
    return out;
  }
};

Manifest push_tiny_image(Registry& reg, const std::string& repo, const std::string& tag) {
  Descriptor config = reg.put_blob(
      repo, R"({"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}})", media::kOciConfig);
  Descriptor layer = reg.put_blob(repo, std::string(1000, 't'), media::kOciLayerTar);
  json m{{"schemaVersion", 2}, {"mediaType", media::kOciManifest}, {"config", config}, {"layers", {layer}}};
  Manifest man{m.dump(), media::kOciManifest};
  reg.put_manifest(repo, tag, man.raw, man.media_type);
  return man;
}

RegistryOptions with(Credentials c) {
  RegistryOptions o;
  o.credentials = std::move(c);
  o.attempts = 1;
  return o;
}

bool has_scope(const json& entry, const std::string& scope) {
  for (auto& s : entry["scope"])
    if (s == scope) return true;
  return false;
}

}  // namespace

TEST_CASE("bearer tokens end to end against docker-registry in token mode") {
  TokenRegistry t;

  SUBCASE("password: challenge, token by GET with Basic, scoped retry") {
    Registry reg(t.registry.host(), with({"pusher", "pusher-password", ""}));
    Manifest m = push_tiny_image(reg, "test/pw", "v1");
    CHECK(reg.get_manifest("test/pw", "v1").raw == m.raw);
    CHECK(reg.get_blob_bytes("test/pw", m.layers()[0]) == std::string(1000, 't'));
    bool push_token = false;
    for (auto& e : t.token_requests()) {
      CHECK(e["method"] == "GET");
      CHECK(e["basic"] == true);
      push_token |= has_scope(e, "repository:test/pw:pull,push") && e["granted"][0]["actions"].size() == 2;
    }
    CHECK(push_token);
  }
  SUBCASE("identity token: the OAuth2 refresh-token POST") {
    Registry reg(t.registry.host(), with({"", "", "refresh-token-of-pusher"}));
    Manifest m = push_tiny_image(reg, "test/idt", "v1");
    auto log = t.token_requests();
    REQUIRE_FALSE(log.empty());
    for (auto& e : log) {
      CHECK(e["method"] == "POST");
      CHECK(e["grant_type"] == "refresh_token");
      CHECK(e["user"] == "pusher");
    }
    SUBCASE("from the Docker config's identitytoken") {
      std::ofstream(t.dir / "docker" / "config.json")
          << json{{"auths", {{t.registry.host(), {{"identitytoken", "refresh-token-of-pusher"}}}}}}.dump();
      RegistryOptions o;
      o.attempts = 1;
      Registry from_config(t.registry.host(), o);
      CHECK(from_config.get_manifest("test/idt", "v1").raw == m.raw);
      CHECK(has_scope(t.token_requests().back(), "repository:test/idt:pull"));
    }
  }
  SUBCASE("anonymous: a token without access is refused by the registry") {
    Registry reg(t.registry.host(), with({}));
    CHECK_THROWS_WITH_AS(push_tiny_image(reg, "test/pw", "v1"), doctest::Contains("authentication failed"),
                         RegistryError);
  }
  SUBCASE("wrong password: the token server says no, the password is not printed") {
    Registry reg(t.registry.host(), with({"pusher", "not-the-password", ""}));
    try {
      push_tiny_image(reg, "test/pw", "v1");
      FAIL("expected an authentication error");
    } catch (const RegistryError& e) {
      CHECK(std::string(e.what()).find("authentication failed") != std::string::npos);
      CHECK(std::string(e.what()).find("not-the-password") == std::string::npos);
    }
  }
}

TEST_CASE("bearer tokens ask for the challenge's scope: DELETE and cross-repository mounts") {
  // Before: the token request asked for repository:<repo>:pull,push whatever the challenge said,
  // so a DELETE (docker-registry wants `delete`) and a mount (`pull` on the source too) got a
  // token without that access, 401 again, and threw; a mount never fell back to an upload.
  TokenRegistry t;
  Registry reg(t.registry.host(), with({"pusher", "pusher-password", ""}));

  SUBCASE("a manifest DELETE") {
    Manifest m = push_tiny_image(reg, "test/del", "v1");
    reg.delete_manifest("test/del", m.digest());
    CHECK_FALSE(reg.head_manifest("test/del", m.digest()));
    CHECK(has_scope(t.token_requests().back(), "repository:test/del:delete"));
  }
  SUBCASE("a mount from a repository the user may pull") {
    Manifest m = push_tiny_image(reg, "test/src", "v1");
    CHECK(reg.mount_blob("test/dst", m.layers()[0].digest, "test/src"));
    CHECK(reg.head_blob("test/dst", m.layers()[0].digest));
    bool both = false;  // one token for the mount: push on the target, pull on the source
    for (auto& e : t.token_requests())
      both |= has_scope(e, "repository:test/dst:pull,push") && has_scope(e, "repository:test/src:pull");
    CHECK(both);
  }
  SUBCASE("a mount from a repository the user may not pull: false, and the upload goes on") {
    Registry owner(t.registry.host(), with({"owner", "owner-password", ""}));
    Manifest m = push_tiny_image(owner, "test/secret", "v1");
    Descriptor layer = m.layers()[0];
    CHECK_FALSE(reg.mount_blob("test/dst", layer.digest, "test/secret"));
    CHECK(reg.put_blob("test/dst", std::string(1000, 't'), media::kOciLayerTar).digest == layer.digest);
    CHECK(reg.head_blob("test/dst", layer.digest));
  }
}
