// One digest per operation: `imgtool verify REF:TAG` and `imgtool sign REF:TAG`
// resolve the tag ONCE, by GET, and use the digest of exactly those bytes.
// Fault injected with tests/split_tag_proxy.py in front of a REAL docker-registry:
// a HEAD of the tag answers image A (signed) while the GET serves image B
// (unsigned) — what a tag re-pointed between two requests looks like, and what
// a real registry cannot be made to do on demand.
#include <doctest/doctest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "image/registry.h"
#include "tests/fixtures.h"
#include "tests/registry_fixture.h"

using namespace imgtool;
using namespace imgtool::testing;
using nlohmann::json;

namespace {

// Pushes a tiny image (one opaque layer, config naming `which`) by digest; returns its digest.
image::Manifest push_tiny(image::Registry& reg, const std::string& repo, const std::string& which) {
  auto layer = reg.put_blob(repo, "layer of " + which, image::media::kOciLayerGzip);
  auto config = reg.put_blob(repo,
                             json{{"architecture", "amd64"},
                                  {"os", "linux"},
                                  {"config", {{"Labels", {{"which", which}}}}},
                                  {"rootfs", {{"type", "layers"}, {"diff_ids", json::array()}}}}
                                 .dump(),
                             image::media::kOciConfig);
  json m{{"schemaVersion", 2}, {"mediaType", image::media::kOciManifest}, {"config", config}, {"layers", {layer}}};
  image::Manifest man{m.dump(), image::media::kOciManifest};
  reg.put_manifest(repo, man.digest(), man.raw, man.media_type);
  return man;
}

// tests/split_tag_proxy.py on a free loopback port, in front of `upstream`.
class Proxy {
 public:
  Proxy(const std::string& upstream, const std::string& tag, const std::string& head_digest) : port_(free_port()) {
    std::string script = source_dir() + "/tests/split_tag_proxy.py", port = std::to_string(port_),
                head = tag + "=" + head_digest;
    const char* argv[] = {"python3",        script.c_str(), "--port",     port.c_str(), "--upstream",
                          upstream.c_str(), "--head",       head.c_str(), nullptr};
    if (posix_spawnp(&pid_, "python3", nullptr, nullptr, const_cast<char**>(argv), environ) != 0)
      throw Error("cannot start python3 " + script);
    for (int i = 0; i < 200 && !accepts(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    if (!accepts()) throw Error("split_tag_proxy.py did not start");
  }
  ~Proxy() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  bool accepts() const { return port_accepts(port_); }
  int port_;
  pid_t pid_ = -1;
};

RunResult cli(const std::vector<std::string>& args) {
  RunResult r = imgtool::testing::imgtool(args);
  MESSAGE("imgtool " << args[0] << " -> " << r.exit_code << "\n" << r.out << r.err);
  return r;
}

std::string sig_tag(const std::string& digest) { return "sha256-" + digest.substr(7) + ".sig"; }

}  // namespace

TEST_CASE("verify and sign of REF:TAG use the digest of the manifest they read, not a separate HEAD") {
  RegistryServer server;
  image::Registry reg(server.host(), server.options());
  const std::string repo = "ai/split";
  image::Manifest a = push_tiny(reg, repo, "A"), b = push_tiny(reg, repo, "B");
  reg.put_manifest(repo, "t", b.raw, b.media_type);  // the tag really points at B

  ScratchDir d("one-digest");
  std::string k = (d.path / "release").string();
  REQUIRE(cli({"keygen", "--out", k}).ok());
  Proxy proxy(server.host(), "t", a.digest());  // ... but a HEAD of it answers A
  std::string ref = "docker://" + proxy.host() + "/" + repo;
  // The tiny images' layers are not tars: no SBOM here (--no-sbom); this test is about which digest is signed.
  REQUIRE(cli({"sign", ref + "@" + a.digest(), "--key", k + ".key", "--no-sbom"}).ok());  // A is signed, B is not

  SUBCASE("verify checks the signature of the image it reads (B, unsigned) and fails") {
    auto r = cli({"verify", ref + ":t", "--key", k + ".pub", "--no-smoke", "--no-claims", "--no-sbom", "--json"});
    CHECK(r.exit_code == 1);
    json rep = json::parse(r.out);
    CHECK(rep["digest"] == b.digest());
    for (auto& row : rep["checks"])
      if (row["id"] == "signature") CHECK(row["status"] == "fail");
  }
  SUBCASE("sign signs the image it read (B), and then verify passes on B") {
    REQUIRE(cli({"sign", ref + ":t", "--key", k + ".key", "--no-sbom"}).ok());
    CHECK_NOTHROW(reg.get_manifest(repo, sig_tag(b.digest())));
    auto r = cli({"verify", ref + ":t", "--key", k + ".pub", "--no-smoke", "--no-claims", "--no-sbom", "--json"});
    CHECK(r.exit_code == 0);
    CHECK(json::parse(r.out)["digest"] == b.digest());
  }
}
