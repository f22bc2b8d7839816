// image::Reference (image/reference.h): parsed once, derived and printed from its parts.
#include "image/reference.h"

#include <doctest/doctest.h>

#include <vector>

#include "core/error.h"

using namespace imgtool;
using namespace imgtool::image;

namespace {
const std::string kDigest = "sha256:" + std::string(64, 'a');
}

TEST_CASE("parse_reference: the three transports") {
  auto d = parse_reference("docker://registry.corp:5000/ai/paddle:3.1.0-gpu");
  CHECK(d.transport == Transport::docker);
  CHECK(d.host == "registry.corp:5000");
  CHECK(d.name == "ai/paddle");
  CHECK(d.tag == "3.1.0-gpu");
  auto dig = parse_reference("docker://127.0.0.1:5000/x/y@sha256:" + std::string(64, 'a'));
  CHECK(dig.digest == "sha256:" + std::string(64, 'a'));
  CHECK(dig.tag.empty());
  CHECK(parse_reference("docker://localhost/app").tag == "latest");
  auto dm = parse_reference("docker-daemon:paddle:3.1.0-gpu-cuda12.6");
  CHECK(dm.transport == Transport::docker_daemon);
  CHECK(dm.name == "paddle");
  CHECK(dm.tag == "3.1.0-gpu-cuda12.6");
  CHECK(parse_reference("docker-daemon:localhost:5000/a/b").tag == "latest");
  CHECK(parse_reference("docker-daemon:localhost:5000/a/b").name == "localhost:5000/a/b");
  auto o = parse_reference("oci:./out/layout:v1");
  CHECK(o.name == "./out/layout");
  CHECK(o.tag == "v1");
  CHECK(parse_reference("oci:/tmp/x").tag.empty());
}

TEST_CASE("parse_reference: bad references are one-line InputErrors") {
  for (std::string bad : {"paddle:1", "docker://noslash", "docker://h/Upper:tag", "docker://h/a:bad tag",
                          "docker://h/a@sha256:123", "docker-daemon:", "oci:"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_reference(bad), InputError);
  }
  try {
    parse_reference("ftp://x");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
    CHECK(std::string(e.what()).find("docker://") != std::string::npos);
  }
}

TEST_CASE("Reference: repository, str and within_transport print it from its parts") {
  auto d = parse_reference("docker://registry.corp:5000/ai/paddle:3.1.0-gpu");
  CHECK(d.repository() == "registry.corp:5000/ai/paddle");
  CHECK(d.within_transport() == "registry.corp:5000/ai/paddle:3.1.0-gpu");
  CHECK(d.str() == "docker://registry.corp:5000/ai/paddle:3.1.0-gpu");
  auto by_digest = parse_reference("docker://127.0.0.1:5000/x/y@" + kDigest);
  CHECK(by_digest.str() == "docker://127.0.0.1:5000/x/y@" + kDigest);
  auto dm = parse_reference("docker-daemon:localhost:5000/a/b:v2");
  CHECK(dm.repository() == "localhost:5000/a/b");
  CHECK(dm.str() == "docker-daemon:localhost:5000/a/b:v2");
  CHECK(dm.within_transport() == "localhost:5000/a/b:v2");
  auto o = parse_reference("oci:./out/layout:v1");
  CHECK(o.repository() == "./out/layout");
  CHECK(o.str() == "oci:./out/layout:v1");
  CHECK(parse_reference("oci:/tmp/x").str() == "oci:/tmp/x");
  // The default tag is written out: the canonical form names what is read.
  CHECK(parse_reference("docker://localhost/app").str() == "docker://localhost/app:latest");
  // str() reads back to the same reference.
  for (const std::string& text : std::vector<std::string>{
           "docker://registry.corp:5000/ai/paddle:3.1.0-gpu", "docker://h.io/a/b@" + kDigest,
           "docker://h.io/a/b:t@" + kDigest, "docker-daemon:paddle:3.1.0", "oci:/tmp/a:b/c", "oci:/tmp/a:b/c:v1"}) {
    CAPTURE(text);
    auto r = parse_reference(text);
    auto back = parse_reference(r.str());
    CHECK(back.str() == r.str());
    CHECK(back.name == r.name);
    CHECK(back.host == r.host);
    CHECK(back.tag == r.tag);
    CHECK(back.digest == r.digest);
  }
}

TEST_CASE("Reference: is_repository tells a written tag from the default one") {
  CHECK(parse_reference("docker://h.io/ai/paddle").is_repository());
  CHECK(parse_reference("docker://h.io:5000/ai/paddle").is_repository());
  CHECK_FALSE(parse_reference("docker://h.io/ai/paddle:latest").is_repository());
  CHECK_FALSE(parse_reference("docker://h.io/ai/paddle@" + kDigest).is_repository());
  CHECK(parse_reference("oci:/tmp/x").is_repository());
  CHECK_FALSE(parse_reference("oci:/tmp/x:v1").is_repository());
}

TEST_CASE("Reference: with_digest and with_tag derive the same repository") {
  auto r = parse_reference("docker://h.io:5000/ai/paddle:3.2.0");
  auto pinned = r.with_digest(kDigest);
  CHECK(pinned.digest == kDigest);
  CHECK(pinned.tag.empty());  // by digest: the tag is dropped
  CHECK(pinned.host == "h.io:5000");
  CHECK(pinned.name == "ai/paddle");
  CHECK(pinned.str() == "docker://h.io:5000/ai/paddle@" + kDigest);
  CHECK(pinned.text == pinned.str());
  CHECK(r.str() == "docker://h.io:5000/ai/paddle:3.2.0");  // the original is unchanged
  auto tagged = pinned.with_tag("release");
  CHECK(tagged.str() == "docker://h.io:5000/ai/paddle:release");
  CHECK(tagged.digest.empty());
  auto repo = parse_reference("docker://h.io/ai/paddle");
  CHECK_FALSE(repo.with_tag("latest").is_repository());
  CHECK(parse_reference("oci:/tmp/x").with_tag("v1").str() == "oci:/tmp/x:v1");
  CHECK(parse_reference("docker-daemon:paddle:1").with_tag("2").str() == "docker-daemon:paddle:2");
}

TEST_CASE("Reference: a bad digest or tag, or a digest where the transport takes none, is an InputError") {
  auto r = parse_reference("docker://h.io/ai/paddle:1");
  CHECK_THROWS_WITH_AS(r.with_digest("sha256:123"), doctest::Contains("expected @sha256:<64 hex digits>"), InputError);
  CHECK_THROWS_WITH_AS(r.with_tag("bad tag"), doctest::Contains("expected a tag of [A-Za-z0-9_.-]"), InputError);
  CHECK_THROWS_WITH_AS(r.with_tag(""), doctest::Contains("expected a tag"), InputError);
  CHECK_THROWS_WITH_AS(parse_reference("docker-daemon:paddle:1").with_digest(kDigest),
                       doctest::Contains("docker-daemon: takes NAME:TAG, not a digest"), InputError);
  CHECK_THROWS_AS(parse_reference("oci:/tmp/x").with_digest(kDigest), InputError);
}

TEST_CASE("parse_engine_name: a FROM name as the engine resolves it") {
  struct Case {
    const char* name;
    const char* host;
    const char* repo;
    const char* tag;
  };
  for (const Case& c :
       {Case{"debian:12", "registry-1.docker.io", "library/debian", "12"},
        Case{"nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04", "registry-1.docker.io", "nvidia/cuda",
             "12.6.3-cudnn-runtime-ubuntu22.04"},
        Case{"docker.io/library/python", "registry-1.docker.io", "library/python", "latest"},
        Case{"docker.io/python:3.11", "registry-1.docker.io", "library/python", "3.11"},
        Case{"127.0.0.1:5000/base/debian:bookworm", "127.0.0.1:5000", "base/debian", "bookworm"},
        Case{"localhost/x:1", "localhost", "x", "1"}, Case{"ghcr.io/org/img:v1", "ghcr.io", "org/img", "v1"}}) {
    CAPTURE(c.name);
    Reference r = parse_engine_name(c.name);
    CHECK(r.transport == Transport::docker);
    CHECK(r.host == c.host);
    CHECK(r.name == c.repo);
    CHECK(r.tag == c.tag);
  }
  std::string d = "sha256:" + std::string(64, 'a');
  Reference pinned = parse_engine_name("nvidia/cuda:12.6@" + d);
  CHECK(pinned.digest == d);
  CHECK(pinned.name == "nvidia/cuda");
  CHECK_THROWS_AS(parse_engine_name("Nvidia/CUDA:1"), InputError);
  CHECK_THROWS_AS(parse_engine_name("debian:bad tag"), InputError);
  CHECK_THROWS_AS(parse_engine_name(""), InputError);
}
