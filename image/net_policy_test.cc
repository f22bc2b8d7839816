// Which hosts count as loopback (plain http allowed without --insecure-http)
// and how URLs are reduced to the origin credentials are bound to.
#include <doctest/doctest.h>

#include "core/error.h"
#include "image/http.h"
#include "image/registry.h"

using namespace imgtool;
using namespace imgtool::image;

TEST_CASE("loopback means 127.0.0.0/8 literals, localhost and ::1 — not a name starting with 127.") {
  for (const char* h : {"127.0.0.1", "127.0.0.1:5000", "127.3.2.1", "127.255.255.254:80", "localhost", "localhost:5000",
                        "[::1]", "[::1]:5000", "::1"})
    CHECK_MESSAGE(is_loopback_host(h), h);
  for (const char* h : {"127.evil.com", "127.evil.com:5000", "127.0.0.1.nip.io", "localhost.evil.com", "128.0.0.1",
                        "10.0.0.1:5000", "registry.corp:5000", "[::2]:5000", ""})
    CHECK_FALSE_MESSAGE(is_loopback_host(h), h);
}

TEST_CASE("url_origin: scheme, host and port, default port explicit") {
  CHECK(url_origin("https://Registry.Corp/v2/x?y=1").str() == "https://registry.corp:443");
  CHECK(url_origin("https://registry.corp:443/v2/").str() == "https://registry.corp:443");
  CHECK(url_origin("http://127.0.0.1:5000/upload/1").str() == "http://127.0.0.1:5000");
  CHECK(url_origin("http://[::1]:5000/x").host_port() == "[::1]:5000");
  CHECK(url_origin("http://r.io/x").str() != url_origin("https://r.io/x").str());
  CHECK_THROWS_AS(url_origin("ftp://r.io/x"), Error);
  CHECK_THROWS_AS(url_origin("/v2/relative"), Error);
}

TEST_CASE("an HTTP client without allow_http refuses plain http before connecting") {
  HttpClient c;
  CHECK_THROWS_WITH_AS(c.send({"GET", "http://127.0.0.1:9/"}), doctest::Contains("only https"), HttpTransportError);
}
