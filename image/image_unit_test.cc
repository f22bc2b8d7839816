// Unit tests of image/: auth challenges, Docker config lookup,
// layer compression. No docker engine or registry needed.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/process.h"
#include "image/auth.h"
#include "image/blob.h"
#include "image/compress.h"
#include "image/oci_layout.h"
#include "image/registry.h"
#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::image;

TEST_CASE("parse_challenges: Bearer and Basic") {
  auto c = parse_challenges(
      R"(Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:ai/paddle:pull,push")");
  REQUIRE(c.size() == 1);
  CHECK(c[0].scheme == "bearer");
  CHECK(c[0].params["realm"] == "https://auth.example.com/token");
  CHECK(c[0].params["service"] == "registry.example.com");
  CHECK(c[0].params["scope"] == "repository:ai/paddle:pull,push");
  auto b = parse_challenges(R"(Basic realm="imgtool test")");
  REQUIRE(b.size() == 1);
  CHECK(b[0].scheme == "basic");
  CHECK(b[0].params["realm"] == "imgtool test");
  auto two = parse_challenges(R"(Basic realm="a", Bearer realm="https://t",service="s")");
  REQUIRE(two.size() == 2);
  CHECK(two[1].params["service"] == "s");
}

TEST_CASE("is_loopback_host") {
  CHECK(is_loopback_host("127.0.0.1:5000"));
  CHECK(is_loopback_host("127.3.2.1"));
  CHECK(is_loopback_host("localhost:5000"));
  CHECK(is_loopback_host("[::1]:5000"));
  CHECK_FALSE(is_loopback_host("registry.corp:5000"));
  CHECK_FALSE(is_loopback_host("128.0.0.1"));
}

namespace {

// A Docker config folder plus a real credential helper script on PATH.
struct CredEnv {
  imgtool::testing::ScratchDir dir{"creds"};
  std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  CredEnv() {
    std::filesystem::create_directories(dir.path / "bin");
    helper("fake", "helper-user", "helper-secret");
    helper("store", "store-user", "store-secret");
    setenv("DOCKER_CONFIG", dir.path.c_str(), 1);
    setenv("PATH", ((dir.path / "bin").string() + ":" + old_path).c_str(), 1);
  }
  ~CredEnv() {
    unsetenv("DOCKER_CONFIG");
    setenv("PATH", old_path.c_str(), 1);
  }
  void helper(const std::string& name, const std::string& user, const std::string& secret) {
    auto p = dir.path / "bin" / ("docker-credential-" + name);
    std::ofstream(p) << "#!/bin/sh\n[ \"$1\" = get ] || exit 1\nread host\n"
                     << "case \"$host\" in known.example*) ;; *) echo 'credentials not found' >&2; exit 1;; esac\n"
                     << "printf '{\"ServerURL\":\"%s\",\"Username\":\"" << user << "\",\"Secret\":\"" << secret
                     << "\"}' \"$host\"\n";
    std::filesystem::permissions(p, std::filesystem::perms::owner_all);
  }
  void config(const std::string& json) { std::ofstream(dir.path / "config.json") << json; }
};

}  // namespace

TEST_CASE("find_credentials: credHelpers, then credsStore, then auths") {
  CredEnv env;
  std::string auths = R"("auths":{"known.example":{"auth":")" + base64_encode("auth-user:auth-pass") +
                      R"("},"other.example:5000":{"auth":")" + base64_encode("o:p") + R"("}})";
  env.config("{\"credHelpers\":{\"known.example\":\"fake\"},\"credsStore\":\"store\"," + auths + "}");
  auto l = find_credentials("known.example");
  REQUIRE(l.creds);
  CHECK(l.creds->username == "helper-user");
  CHECK(l.creds->password == "helper-secret");
  CHECK(l.source.find("credHelpers") != std::string::npos);

  env.config("{\"credsStore\":\"store\"," + auths + "}");
  l = find_credentials("known.example");
  REQUIRE(l.creds);
  CHECK(l.creds->username == "store-user");
  // the store does not know this host: fall through to auths
  l = find_credentials("other.example:5000");
  REQUIRE(l.creds);
  CHECK(l.creds->username == "o");
  CHECK(l.creds->password == "p");

  env.config("{" + auths + "}");
  l = find_credentials("known.example");
  REQUIRE(l.creds);
  CHECK(l.creds->username == "auth-user");
  CHECK_FALSE(find_credentials("nowhere.example").creds);

  // Docker Hub: `docker login` writes the v1 index URL; the pull goes to registry-1.docker.io.
  env.config(R"({"auths":{"https://index.docker.io/v1/":{"auth":")" + base64_encode("hub:secret") + R"("}}})");
  l = find_credentials("registry-1.docker.io");
  REQUIRE(l.creds);
  CHECK(l.creds->username == "hub");

  env.config("{not json");
  CHECK_THROWS_AS(find_credentials("known.example"), InputError);
}

TEST_CASE("layer compression: standard gzip and zstd, digests in one pass") {
  std::string input;
  for (long long i = 0; i < 300000; ++i) input += std::to_string(i * 7919 % 100003) + (i % 13 ? " " : "\n");
  input += std::string(3 << 20, 'z');  // > several 1 MiB blocks
  imgtool::testing::ScratchDir dir("compress");
  for (auto c : {Compression::kGzip, Compression::kZstd}) {
    std::string out;
    LayerCompressor lc(c, 3, [&](const char* p, size_t n) { out.append(p, n); });
    for (size_t off = 0; off < input.size(); off += 100000)
      lc.write(input.data() + off, std::min<size_t>(100000, input.size() - off));
    CompressedLayer r = lc.finish();
    CHECK(r.diff_id == sha256_digest(input));
    CHECK(r.digest == sha256_digest(out));
    CHECK(r.size == static_cast<int64_t>(out.size()));
    CHECK(out.size() < input.size() / 2);
    auto f = dir.path / "blob";
    std::ofstream(f, std::ios::binary) << out;
    auto d = run({c == Compression::kGzip ? "gzip" : "zstd", "-dc", f.string()});
    if (c == Compression::kZstd && !have_program("zstd")) continue;
    CHECK(d.ok());
    CHECK(d.out == input);
  }
}

TEST_CASE("layer compression: an empty layer is a valid gzip") {
  std::string out;
  LayerCompressor lc(Compression::kGzip, 2, [&](const char* p, size_t n) { out.append(p, n); });
  CompressedLayer r = lc.finish();
  CHECK(r.diff_id == sha256_digest(""));
  imgtool::testing::ScratchDir dir("compress-empty");
  std::ofstream(dir.path / "e.gz", std::ios::binary) << out;
  auto d = run({"gzip", "-dc", (dir.path / "e.gz").string()});
  CHECK(d.ok());
  CHECK(d.out.empty());
}

TEST_CASE("manifest descriptors: a size that is not an integer of int64 is refused, naming it") {
  std::string digest = "sha256:" + std::string(64, 'a');
  auto manifest_with_size = [&](const std::string& size) {
    return imgtool::image::Manifest{
        R"({"schemaVersion": 2, "mediaType": ")" + std::string(imgtool::image::media::kOciManifest) +
            R"(", "config": {"mediaType": "x", "digest": ")" + digest + R"(", "size": 2}, )" +
            R"("layers": [{"mediaType": "y", "digest": ")" + digest + R"(", "size": )" + size + "}]}",
        imgtool::image::media::kOciManifest};
  };
  CHECK(manifest_with_size("7").layers().at(0).size == 7);
  // Found by fuzz_manifest: get<int64_t>() of 1.1e119 was undefined behaviour.
  for (std::string bad : {"1.1e119", "2.5", "18446744073709551615", "\"7\""}) {
    CAPTURE(bad);
    try {
      manifest_with_size(bad).layers();
      FAIL("expected the descriptor to be refused");
    } catch (const std::exception& e) {
      CHECK(std::string(e.what()).find("expected an integer size, found " + (bad == "\"7\"" ? bad : std::string())) !=
            std::string::npos);
    }
  }
}

TEST_CASE("oci: layout blobs appear whole and checked (mkstemp, fsync, rename), or not at all") {
  namespace fs = std::filesystem;
  imgtool::testing::ScratchDir dir("oci-blobs");
  OciDestination dst(dir.path / "layout");
  std::string bytes = "layer bytes";
  Descriptor d{"application/vnd.oci.image.layer.v1.tar", sha256_digest(bytes), static_cast<int64_t>(bytes.size())};
  StringReader ok(bytes);
  dst.put_blob(d, ok);
  fs::path blob = dir.path / "layout/blobs/sha256" / d.digest.substr(7);
  CHECK(read_file(blob) == bytes);
  CHECK(fs::status(blob).permissions() == fs::perms(0644));
  Descriptor lie{d.media_type, sha256_digest("other"), d.size};
  StringReader wrong(bytes);
  std::string err;
  try {
    dst.put_blob(lie, wrong);
  } catch (const Error& e) {
    err = e.what();
  }
  CHECK(err.find("expected " + lie.digest) != std::string::npos);
  std::vector<std::string> names;
  for (auto& e : fs::directory_iterator(dir.path / "layout/blobs/sha256"))
    names.push_back(e.path().filename().string());
  CHECK(names == std::vector<std::string>{d.digest.substr(7)});  // no temp file, no blob under the lie's name
}
