// The registry client against a HOSTILE registry (image/testing/hostile_registry.py):
// answers a real registry would never give, each scripted per test. What must
// hold: credentials go only to the registry's own origin (none to an origin it
// points to, whose 401 is an error), https is never downgraded, tag lists are whole,
// bodies are bounded, descriptors are checked, requests have a deadline, and
// a registry that answers HEAD and GET differently cannot mix two images.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/hash.h"
#include "core/process.h"
#include "image/http.h"
#include "image/registry.h"
#include "image/testing/python_server.h"

using namespace imgtool;
using namespace imgtool::image;
using imgtool::image::testing::HostileRegistry;
using nlohmann::json;

namespace {

// A private scratch folder (mkdtemp) with an empty Docker config, so no
// credentials of the machine's user take part.
struct Scratch {
  std::filesystem::path path;
  Scratch() {
    std::string t = (std::filesystem::temp_directory_path() / "imgtool-hostile-XXXXXX").string();
    path = ::mkdtemp(t.data());
    std::filesystem::create_directories(path / "docker");
    ::setenv("DOCKER_CONFIG", (path / "docker").c_str(), 1);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// A CA and a server certificate for 127.0.0.1, made with the openssl CLI.
std::vector<std::string> make_tls(const std::filesystem::path& dir) {
  auto sh = [&](std::vector<std::string> argv) {
    RunOptions o;
    o.cwd = dir.string();
    auto r = run(argv, o);
    if (!r.ok()) throw Error("openssl failed: " + r.err);
  };
  std::ofstream(dir / "ext.cnf") << "subjectAltName=IP:127.0.0.1\n";
  sh({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
      "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=imgtool hostile CA"});
  sh({"openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key",
      "-out", "server.csr", "-subj", "/CN=127.0.0.1"});
  sh({"openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out",
      "server.crt", "-days", "2", "-extfile", "ext.cnf"});
  return {(dir / "server.crt").string(), (dir / "server.key").string()};
}

json route(const std::string& method, const std::string& path, int status, json extra = json::object()) {
  json r{{"method", method}, {"path", path}, {"status", status}};
  r.update(extra);
  return r;
}

json v2_ok() { return route("GET", "^/v2/$", 200, {{"body", "{}"}}); }

RegistryOptions with_password() {
  RegistryOptions o;
  o.credentials = Credentials{"user", "secret-password", ""};
  o.attempts = 1;
  return o;
}

const std::string kBasic = "Basic " + base64_encode("user:secret-password");

bool any_authorization(const std::vector<json>& reqs) {
  for (auto& r : reqs)
    if (!r["authorization"].is_null()) return true;
  return false;
}

}  // namespace

TEST_CASE("hostile registry: credentials never leave their origin") {
  Scratch s;
  HostileRegistry reg(s.path, "reg"), foreign(s.path, "foreign");
  foreign.script({{"routes",
                   {route("PUT", "^/upload/1", 201), route("DELETE", "^/upload/", 204),
                    route("GET", "^/v2/r/tags/list", 200, {{"body", R"({"tags":["b"]})"}}),
                    route("GET", "^/blob", 200, {{"body", "hello"}})}}});
  reg.script({{"basic_auth", "user:secret-password"},
              {"routes",
               {v2_ok(), route("HEAD", "^/v2/r/blobs/", 404),
                route("POST", "^/v2/r/blobs/uploads/", 202, {{"headers", {{"Location", foreign.url() + "/upload/1"}}}}),
                route("GET", "^/v2/r/tags/list\\?n=", 200,
                      {{"body", R"({"tags":["a"]})"},
                       {"headers", {{"Link", "<" + foreign.url() + "/v2/r/tags/list?last=a>; rel=\"next\""}}}}),
                route("GET", "^/v2/r/blobs/sha256:", 307, {{"headers", {{"Location", foreign.url() + "/blob"}}}})}}});
  Registry client(reg.host(), with_password());

  SUBCASE("an upload Location on another port gets no Authorization") {
    client.put_blob("r", std::string("hello"), media::kOciLayerTar);
    auto got = foreign.requests();
    REQUIRE(got.size() == 1);
    CHECK(got[0]["method"] == "PUT");
    CHECK(got[0]["authorization"].is_null());
  }
  SUBCASE("a pagination Link on another port gets no Authorization") {
    CHECK(client.list_tags("r") == std::vector<std::string>{"a", "b"});
    auto got = foreign.requests();
    REQUIRE(got.size() == 1);
    CHECK(got[0]["authorization"].is_null());
  }
  SUBCASE("a blob redirect to another port gets no Authorization") {
    Descriptor d{media::kOciLayerTar, sha256_digest("hello"), 5};
    CHECK(client.get_blob_bytes("r", d) == "hello");
    CHECK_FALSE(any_authorization(foreign.requests()));
  }
  // The registry itself did get the password, so there was something to leak.
  bool reg_got_password = false;
  for (auto& r : reg.requests()) reg_got_password |= r["authorization"] == kBasic;
  CHECK(reg_got_password);
}

TEST_CASE("hostile registry: an origin it points to gets no credentials, not even its own, and no DELETE") {
  // The confused deputy: before, a foreign upload Location, Link or redirect was answered with
  // THAT origin's credentials from the Docker config, and a refused mount's 202 Location got a
  // DELETE there (with those credentials after its 401): a staging registry could make
  // `promote --to` or `copy` delete a release manifest on another registry.
  Scratch s;
  HostileRegistry reg(s.path, "reg"), foreign(s.path, "foreign");
  std::ofstream(s.path / "docker" / "config.json")
      << json{{"auths", {{foreign.host(), {{"auth", base64_encode("fuser:foreign-password")}}}}}}.dump();
  std::string release = foreign.url() + "/v2/release/manifests/sha256:" + std::string(64, 'a');
  foreign.script(
      {{"basic_auth", "fuser:foreign-password"},
       {"routes",
        {route("DELETE", "^/", 202), route("PUT", "^/", 201), route("GET", "^/", 200, {{"body", R"({"tags":[]})"}})}}});
  reg.script({{"basic_auth", "user:secret-password"},
              {"routes",
               {v2_ok(), route("HEAD", "^/v2/r/blobs/", 404),
                route("POST", "^/v2/r/blobs/uploads/\\?mount=", 202, {{"headers", {{"Location", release}}}}),
                route("POST", "^/v2/r/blobs/uploads/", 202, {{"headers", {{"Location", foreign.url() + "/upload/1"}}}}),
                route("GET", "^/v2/r/tags/list\\?n=", 200,
                      {{"body", R"({"tags":["a"]})"},
                       {"headers", {{"Link", "<" + foreign.url() + "/v2/r/tags/list?last=a>; rel=\"next\""}}}}),
                route("GET", "^/v2/r/blobs/sha256:", 307, {{"headers", {{"Location", foreign.url() + "/blob"}}}})}}});
  Registry client(reg.host(), with_password());

  SUBCASE("an upload Location: its 401 is an error") {
    CHECK_THROWS_WITH_AS(client.put_blob("r", std::string("hello"), media::kOciLayerTar),
                         doctest::Contains("sends credentials only to the registry's own origin"), RegistryError);
  }
  SUBCASE("a pagination Link: its 401 is an error") {
    CHECK_THROWS_WITH_AS(client.list_tags("r"), doctest::Contains("answered 401"), RegistryError);
  }
  SUBCASE("a blob redirect: its 401 is an error") {
    Descriptor d{media::kOciLayerTar, sha256_digest("hello"), 5};
    CHECK_THROWS_WITH_AS(client.get_blob_bytes("r", d), doctest::Contains("answered 401"), RegistryError);
  }
  SUBCASE("a mount answered with a foreign Location: no DELETE there, the caller uploads") {
    CHECK_FALSE(client.mount_blob("r", sha256_digest("hello"), "other"));
    CHECK(foreign.requests().empty());
  }
  for (auto& r : foreign.requests()) {
    CHECK(r["authorization"].is_null());
    CHECK(r["method"] != "DELETE");
  }
  CHECK(foreign.requests().size() <= 1);  // one try, never a second one with credentials
  bool reg_got_password = false;          // the registry's own 401 was answered: there was something to leak
  for (auto& r : reg.requests()) reg_got_password |= r["authorization"] == kBasic;
  CHECK(reg_got_password);
}

TEST_CASE("hostile registry: a refused mount's upload session is cancelled on the registry itself") {
  Scratch s;
  HostileRegistry reg(s.path, "reg");
  reg.script(
      {{"routes",
        {v2_ok(), route("POST", "^/v2/r/blobs/uploads/", 202, {{"headers", {{"Location", "/v2/r/blobs/uploads/u1"}}}}),
         route("DELETE", "^/v2/r/blobs/uploads/u1$", 204)}}});
  Registry client(reg.host(), with_password());
  CHECK_FALSE(client.mount_blob("r", sha256_digest("hello"), "other"));
  auto got = reg.requests();
  REQUIRE_FALSE(got.empty());
  CHECK(got.back()["method"] == "DELETE");
}

TEST_CASE("hostile registry: an https registry is never followed to plain http") {
  Scratch s;
  auto tls = make_tls(s.path);
  HostileRegistry reg(s.path, "tls", tls), plain(s.path, "plain");
  plain.script({{"routes", {route("PUT", "^/", 201), route("GET", "^/", 200, {{"body", "{}"}})}}});
  std::string http_url = plain.url("http");
  reg.script({{"basic_auth", "user:secret-password"},
              {"routes",
               {v2_ok(), route("HEAD", "^/v2/r/blobs/", 404),
                route("POST", "^/v2/r/blobs/uploads/", 202, {{"headers", {{"Location", http_url + "/upload/1"}}}}),
                route("GET", "^/v2/r/tags/list", 200,
                      {{"body", R"({"tags":["a"]})"},
                       {"headers", {{"Link", "<" + http_url + "/v2/r/tags/list?last=a>; rel=\"next\""}}}}),
                route("GET", "^/v2/r/manifests/v1$", 302, {{"headers", {{"Location", http_url + "/m"}}}})}}});
  RegistryOptions o = with_password();
  o.ca_file = (s.path / "ca.crt").string();
  Registry client(reg.host(), o);
  REQUIRE(client.base_url().rfind("https://", 0) == 0);

  SUBCASE("an http upload Location") {
    CHECK_THROWS_WITH_AS(client.put_blob("r", std::string("hello"), media::kOciLayerTar),
                         doctest::Contains("refusing the downgrade"), Error);
  }
  SUBCASE("an http pagination Link") {
    CHECK_THROWS_WITH_AS(client.list_tags("r"), doctest::Contains("refusing the downgrade"), Error);
  }
  SUBCASE("a redirect to http") {
    CHECK_THROWS_WITH_AS(client.get_manifest("r", "v1"), doctest::Contains("refusing the downgrade"), Error);
  }
  CHECK(plain.requests().empty());
}

TEST_CASE("hostile registry: a plain-http registry's redirects and references stay where plain http is allowed") {
  // libcurl followed a plain-http registry's redirects to plain http anywhere, and a relative
  // reference was glued to the base: "@HOST/x" became http://127.0.0.1:PORT@HOST/x, another host.
  Scratch s;
  HostileRegistry reg(s.path, "reg"), foreign(s.path, "foreign");
  foreign.script({{"routes", {route("GET", "^/", 200, {{"body", R"({"tags":["evil"]})"}})}}});
  reg.script({{"routes",
               {v2_ok(),
                route("GET", "^/v2/r/manifests/v1$", 302, {{"headers", {{"Location", "http://example.invalid:9/m"}}}}),
                route("GET", "^/v2/r/tags/list\\?n=", 200,
                      {{"body", R"({"tags":["a"]})"},
                       {"headers", {{"Link", "<@" + foreign.host() + "/v2/r/tags/list?last=a>; rel=\"next\""}}}}),
                route("GET", "^/v2/r/tags/@", 200, {{"body", R"({"tags":["b"]})"}})}}});
  Registry client(reg.host(), with_password());
  REQUIRE(client.base_url().rfind("http://", 0) == 0);
  CHECK_THROWS_WITH_AS(client.get_manifest("r", "v1"), doctest::Contains("on plain http to example.invalid:9"), Error);
  CHECK(client.list_tags("r") == std::vector<std::string>{"a", "b"});  // the Link is a path on the registry
  CHECK(foreign.requests().empty());
  bool followed_as_path = false;  // resolved against the page that sent it (RFC 8288: the link's context)
  for (auto& r : reg.requests())
    followed_as_path |= r["path"] == "/v2/r/tags/@" + foreign.host() + "/v2/r/tags/list?last=a";
  CHECK(followed_as_path);
}

TEST_CASE("hostile registry: bodies are bounded") {
  Scratch s;
  HostileRegistry reg(s.path, "big");
  std::string kib(1024, 'x');
  json oci{{"Content-Type", media::kOciManifest}};
  reg.script(
      {{"routes",
        {v2_ok(), route("GET", "^/v2/r/manifests/big$", 200, {{"body", kib}, {"repeat", 5 * 1024}, {"headers", oci}}),
         route("GET", "^/v2/r/manifests/endless$", 200, {{"endless", true}, {"headers", oci}}),
         route("GET", "^/v2/r/manifests/error$", 404, {{"endless", true}}),
         route("GET", "^/v2/r/blobs/", 200, {{"endless", true}}),
         route("GET", "^/v2/t/", 401,
               {{"headers", {{"WWW-Authenticate", "Bearer realm=\"" + reg.url() + "/token\""}}}}),
         route("GET", "^/token", 200, {{"endless", true}})}}});
  RegistryOptions o;
  o.attempts = 1;
  Registry client(reg.host(), o);
  CHECK_THROWS_WITH_AS(client.get_manifest("r", "big"), doctest::Contains("4194304-byte limit"), Error);
  CHECK_THROWS_WITH_AS(client.get_manifest("r", "endless"), doctest::Contains("4194304-byte limit"), Error);
  CHECK_THROWS_WITH_AS(client.get_manifest("r", "error"), doctest::Contains("65536-byte limit"), Error);
  CHECK_THROWS_WITH_AS(client.get_manifest("t", "v1"), doctest::Contains("65536-byte limit"), Error);
  Descriptor layer{media::kOciLayerTar, sha256_digest("abc"), 3};
  CHECK_THROWS_WITH_AS(client.get_blob_bytes("r", layer), doctest::Contains("longer than"), Error);
  // A config claiming more than 4 MiB is refused before any request.
  size_t before = reg.requests().size();
  Descriptor config{media::kOciConfig, sha256_digest("{}"), int64_t{1} << 30};
  CHECK_THROWS_WITH_AS(client.get_blob_bytes("r", config), doctest::Contains("limit"), Error);
  CHECK(reg.requests().size() == before);
}

TEST_CASE("hostile registry: a descriptor of size 0 or less is invalid") {
  Scratch s;
  HostileRegistry reg(s.path, "zero");
  reg.script({{"routes", {v2_ok(), route("GET", "^/v2/r/blobs/", 200, {{"endless", true}})}}});
  Registry client(reg.host());
  client.ping();
  for (int64_t size : {int64_t{0}, int64_t{-1}}) {
    Descriptor d{media::kOciLayerGzip, sha256_digest("x"), size};
    CHECK_THROWS_WITH_AS(client.get_blob("r", d), doctest::Contains("invalid descriptor"), Error);
    CHECK_THROWS_WITH_AS(client.get_blob_bytes("r", d), doctest::Contains("invalid descriptor"), Error);
  }
  for (auto& r : reg.requests()) CHECK(r["path"].get<std::string>().find("/blobs/") == std::string::npos);
}

TEST_CASE("hostile registry: a trickling answer meets the request deadline") {
  Scratch s;
  HostileRegistry reg(s.path, "slow");
  // 60 bytes at 5 bytes/s: 12 s, far above the 1.5 s deadline but above
  // libcurl's low-speed floor, so only a total deadline stops it.
  reg.script({{"routes",
               {v2_ok(), route("GET", "^/v2/r/manifests/v1$", 200,
                               {{"body", std::string(60, ' ')},
                                {"trickle", 0.2},
                                {"headers", {{"Content-Type", media::kOciManifest}}}})}}});
  RegistryOptions o;
  o.attempts = 1;
  o.request_timeout = std::chrono::milliseconds(1500);
  Registry client(reg.host(), o);
  client.ping();
  auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(client.get_manifest("r", "v1"), doctest::Contains("timed out"), Error);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
}

TEST_CASE("hostile registry: HEAD and GET that disagree cannot mix two images") {
  Scratch s;
  HostileRegistry reg(s.path, "split");
  std::string a =
      R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","layers":[],"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:aa","size":1},"annotations":{"image":"A"}})";
  std::string b =
      R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","layers":[],"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:bb","size":1},"annotations":{"image":"B"}})";
  json headers_a{{"Content-Type", media::kOciManifest}, {"Docker-Content-Digest", sha256_digest(a)}};
  reg.script({{"routes",
               {v2_ok(), route("HEAD", "^/v2/r/manifests/", 200, {{"headers", headers_a}, {"body", a}}),
                // GET serves image B but still names A's digest (by tag and by digest)
                route("GET", "^/v2/r/manifests/", 200, {{"headers", headers_a}, {"body", b}})}}});
  Registry client(reg.host());
  std::string digest = client.resolve("r", "v1");
  CHECK(digest == sha256_digest(a));
  CHECK_THROWS_WITH_AS(client.get_manifest("r", digest), doctest::Contains("tampered"), Error);
  CHECK_THROWS_WITH_AS(client.get_manifest("r", "v1"), doctest::Contains("tampered"), Error);
}

TEST_CASE("hostile registry: a tag listing is whole or an error, and its Links are read per RFC 8288") {
  // Before: a 404 or a non-JSON body on page 2 returned page 1 alone, an unquoted rel=next was
  // dropped, rel="prev" was followed when it came first, and a Link back to a page already read
  // (or an endless chain of new ones) looped forever.
  Scratch s;
  HostileRegistry reg(s.path, "pages");
  auto page = [](const std::string& query, const std::string& tags, json headers = json::object()) {
    return route("GET", "^/v2/r/tags/list\\?" + query + "$", 200,
                 {{"body", R"({"tags":)" + tags + "}"}, {"headers", headers}});
  };
  auto first = [&](json link) { return page("n=1000", R"(["a"])", {{"Link", link}}); };
  RegistryOptions o;
  o.attempts = 1;
  Registry client(reg.host(), o);

  SUBCASE("a 404 on a later page") {
    reg.script({{"routes", {v2_ok(), first(R"(</v2/r/tags/list?last=a>; rel="next")")}}});
    CHECK_THROWS_WITH_AS(client.list_tags("r"), doctest::Contains("page 2 (a partial list is never returned)"), Error);
  }
  SUBCASE("a later page that is not a tag list") {
    reg.script({{"routes",
                 {v2_ok(), first(R"(</v2/r/tags/list?last=a>; rel="next")"),
                  route("GET", "^/v2/r/tags/list\\?last=a$", 200, {{"body", "<html>busy</html>"}})}}});
    CHECK_THROWS_WITH_AS(client.list_tags("r"), doctest::Contains("expected a JSON object"), Error);
  }
  SUBCASE("a page of 300 KB of nested brackets (a stack overflow in any recursive walk)") {
    reg.script({{"routes", {v2_ok(), page("n=1000", std::string(150000, '[') + std::string(150000, ']'))}}});
    CHECK_THROWS_WITH_AS(client.list_tags("r"), doctest::Contains("expected a JSON object"), Error);
  }
  SUBCASE("a page naming something that is not a tag") {
    reg.script({{"routes", {v2_ok(), page("n=1000", R"(["a", "b c"])")}}});
    CHECK_THROWS_WITH_AS(client.list_tags("r"), doctest::Contains("expected tag names"), Error);
  }
  SUBCASE("an unquoted rel=next") {
    reg.script({{"routes", {v2_ok(), first("</v2/r/tags/list?last=a>; rel=next"), page("last=a", R"(["b"])")}}});
    CHECK(client.list_tags("r") == std::vector<std::string>{"a", "b"});
  }
  SUBCASE("rel=prev before rel=next, in one line and in two") {
    json one = R"(</v2/r/tags/list?prev=1>; rel="prev", </v2/r/tags/list?last=a>; rel="next")";
    json two = json::array({R"(</v2/r/tags/list?prev=1>; rel="prev")", R"(</v2/r/tags/list?last=a>; rel="next")"});
    for (const json& link : {one, two}) {
      reg.script({{"routes", {v2_ok(), first(link), page("prev=1", R"(["from-prev"])"), page("last=a", R"(["b"])")}}});
      CHECK(client.list_tags("r") == std::vector<std::string>{"a", "b"});
    }
  }
  SUBCASE("a Link back to a page already read") {
    reg.script({{"routes",
                 {v2_ok(), first(R"(</v2/r/tags/list?last=a>; rel="next")"),
                  page("last=a", R"(["b"])", {{"Link", R"(</v2/r/tags/list?n=1000>; rel="next")"}})}}});
    CHECK_THROWS_WITH_AS(client.list_tags("r"), doctest::Contains("the same next page twice"), Error);
  }
  SUBCASE("a new next page every time") {
    reg.script({{"routes",
                 {v2_ok(),
                  route("GET", "^/v2/r/tags/list", 200, {{"body", R"({"tags":["a"]})"}, {"next_link_suffix", "x"}})}}});
    CHECK_THROWS_WITH_AS(client.list_tags("r"), doctest::Contains("more than 1000 pages"), Error);
  }
  SUBCASE("a Link off the grammar") {
    reg.script({{"routes", {v2_ok(), first("/v2/r/tags/list?last=a; rel=next")}}});
    CHECK_THROWS_WITH_AS(client.list_tags("r"), doctest::Contains("RFC 8288"), Error);
  }
  SUBCASE("no such repository: no tags (a 404 on the first page)") {
    reg.script({{"routes", {v2_ok()}}});
    CHECK(client.list_tags("r").empty());
  }
}

namespace {

// The transport error of one https GET (the test fails when there is none).
HttpTransportError transport_error(const std::string& url) {
  HttpOptions o;
  o.timeout = std::chrono::seconds(10);
  HttpClient c(o);
  try {
    c.send({"GET", url});
  } catch (const HttpTransportError& e) {
    return e;
  }
  FAIL("expected a transport error from " << url);
  return HttpTransportError("", false, 0);
}

}  // namespace

TEST_CASE("hostile registry: --insecure-http falls back to http only when the port answered TLS with plain HTTP") {
  // Before: any TLS connect error counted as "the port does not speak TLS", so with
  // --insecure-http a reset (or an alert) during the handshake — what a man in the middle can
  // cause at will — downgraded the registry to plain http.
  Scratch s;
  auto tls = make_tls(s.path);
  HostileRegistry plain(s.path, "plain"), reset(s.path, "reset", {"--tls-reset"}), untrusted(s.path, "tls", tls);
  plain.script({{"routes", {v2_ok()}}});

  HttpTransportError http_answer = transport_error(plain.url("https") + "/v2/");
  CHECK_MESSAGE(http_answer.not_tls(), http_answer.detail);
  HttpTransportError rst = transport_error(reset.url("https") + "/v2/");
  CHECK_FALSE_MESSAGE(rst.not_tls(), rst.detail);
  HttpTransportError cert = transport_error(untrusted.url("https") + "/v2/");
  CHECK(cert.tls_verification());
  CHECK_FALSE(cert.not_tls());

  RegistryOptions o;
  o.insecure_http = true;
  o.attempts = 1;
  Registry client(reset.host(), o);
  CHECK_THROWS_WITH_AS(client.base_url(), doctest::Contains("cannot reach registry"), Error);
}
