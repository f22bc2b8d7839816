// Rebuild = same digest (issue 35), on the real CPU cell: the generated Dockerfile (Paddle 3.3.1 from
// the test wheelhouse on the local Debian base) built twice with `docker build --no-cache`, a few
// seconds apart, each copied with `imgtool copy --reproducible <its io.imgtool.source-date-epoch>`
// into its own loopback docker-registry: one manifest digest, and `imgtool diff` says "same". An
// image with one file changed after the build is told apart, and diff names the file.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/fs.h"
#include "core/strings.h"
#include "tests/fixtures.h"
#include "tests/registry_fixture.h"

using namespace imgtool;
using namespace imgtool::testing;

namespace {

RunResult must(const std::vector<std::string>& argv, const RunOptions& o = {}) {
  RunResult r = run(argv, o);
  INFO(strings::join(argv, " ") << "\n" << r.out << r.err);
  REQUIRE(r.ok());
  return r;
}

RunResult cli(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
  RunResult r = imgtool::testing::imgtool(args, {.timeout = std::chrono::seconds(1200), .env = env});
  MESSAGE("imgtool " << strings::join(args, " ") << " -> " << r.exit_code << "\n" << r.out << r.err);
  return r;
}

std::string digest_of(const std::string& copy_out) {
  auto at = copy_out.find(" sha256:");
  REQUIRE(at != std::string::npos);
  return copy_out.substr(at + 1, 71);
}

// On a mismatch, where each file the diff names lies in the two built images themselves (ls in a
// container): a file the build left out (once seen here: one header of 13084, absent in one
// --no-cache build) is told from one the copy or the normalizer lost.
void where_are(const std::string& diff_out, const std::vector<std::string>& images) {
  for (size_t at = 0, nl; (nl = diff_out.find('\n', at)) != std::string::npos; at = nl + 1) {
    std::string line = diff_out.substr(at, nl - at);
    auto colon = line.find(": ");
    if (line.rfind("  ", 0) != 0 || colon == std::string::npos || line.find(" | ") == std::string::npos) continue;
    std::string path = "/" + strings::trim(line.substr(0, colon));
    for (const auto& img : images) {
      RunResult ls = run({"docker", "run", "--rm", "--network", "none", img, "ls", "-l", path});
      MESSAGE(img << ": " << path << (ls.ok() ? " present: " + ls.out : " ABSENT in the built image: " + ls.err));
    }
  }
}

// On two digests of what diff calls the same layers (one tar, two gzip encodings: how ISA-L's deflate
// was caught, issue 35; image/compress.cc), which layer blobs differ, their sizes and where they part.
void where_blobs_differ(const std::string& a, const std::string& b, const fs::path& dir) {
  std::vector<nlohmann::json> layers;
  std::vector<std::string> manifests;
  for (const auto& [ref, sub] : {std::pair{a, "a"}, std::pair{b, "b"}}) {
    if (!cli({"copy", ref, "oci:" + (dir / sub).string() + ":x"}).ok()) return;
    auto index = nlohmann::json::parse(read_file(dir / sub / "index.json"));
    std::string m = index["manifests"][0]["digest"];
    manifests.push_back(read_file(dir / sub / "blobs" / "sha256" / m.substr(7)));
    layers.push_back(nlohmann::json::parse(manifests.back())["layers"]);
  }
  if (layers[0] == layers[1])  // the same blobs: then the manifests themselves differ
    MESSAGE("every layer blob is the same; the manifests:\n" << manifests[0] << "\n" << manifests[1]);
  for (size_t i = 0; i < std::min(layers[0].size(), layers[1].size()); ++i) {
    std::string da = layers[0][i]["digest"], db = layers[1][i]["digest"];
    if (da == db) continue;
    std::string x = read_file(dir / "a" / "blobs" / "sha256" / da.substr(7));
    std::string y = read_file(dir / "b" / "blobs" / "sha256" / db.substr(7));
    size_t first = 0, differing = 0;
    while (first < x.size() && first < y.size() && x[first] == y[first]) ++first;
    for (size_t k = first; k < std::min(x.size(), y.size()); ++k) differing += x[k] != y[k];
    MESSAGE("layer " << i << ": " << da << " (" << x.size() << " bytes) vs " << db << " (" << y.size()
                     << " bytes): first differing byte " << first << ", " << differing << " bytes differ");
  }
}

}  // namespace

TEST_CASE("the CPU cell built twice with --no-cache is one digest when copied --reproducible") {
  ScratchDir d("reproducible");
  std::string base = base_image(), wheels = wheelhouse();
  RunResult gen =
      imgtool::testing::imgtool({"generate", source_dir() + "/matrix/local.yaml", "--out", (d.path / "gen").string()},
                                {.env = {{"IMGTOOL_WHEELHOUSE", wheels}, {"IMGTOOL_TEST_BASE", base}}});
  REQUIRE_MESSAGE(gen.ok(), (gen.out + gen.err));
  fs::path cell = d.path / "gen" / "3.3.1";
  REQUIRE(fs::exists(cell / "Dockerfile"));
  CHECK(read_file(cell / "Dockerfile").find("\nARG SOURCE_DATE_EPOCH=") != std::string::npos);
  std::string tag = "imgtool-test/reproducible:" + std::to_string(::getpid());
  HandBuilt built;  // the three images and the two first stages go when the test ends
  for (const char* s : {"-a", "-b", "-changed"}) built.tags.push_back(tag + s);
  auto build = [&](const std::string& t) {
    must(built.docker_build({"-q", "--no-cache", "-t", t, cell.string()}), {.timeout = std::chrono::seconds(1800)});
  };
  build(tag + "-a");
  std::this_thread::sleep_for(std::chrono::seconds(3));  // another second on every clock the build reads
  build(tag + "-b");
  std::string epoch = strings::trim(must({"docker", "image", "inspect", "-f",
                                          "{{index .Config.Labels \"io.imgtool.source-date-epoch\"}}", tag + "-a"})
                                        .out);
  REQUIRE_FALSE(epoch.empty());
  // The builds themselves differ (times in the config, the layers' mtimes): that is what is fixed.
  CHECK(must({"docker", "image", "inspect", "-f", "{{.Id}}", tag + "-a"}).out !=
        must({"docker", "image", "inspect", "-f", "{{.Id}}", tag + "-b"}).out);

  RegistryServer one(RegistryServer::Mode::kHttp, "repro-1"), two(RegistryServer::Mode::kHttp, "repro-2");
  std::string at1 = "docker://" + one.host() + "/ai/paddle:3.3.1", at2 = "docker://" + two.host() + "/ai/paddle:3.3.1";
  RunResult c1 = cli({"copy", "docker-daemon:" + tag + "-a", at1, "--reproducible", epoch});
  // The second copy in a cache of its own: every layer, the base's too, normalized and gzip'd afresh
  // (from the shared cache the base's would be the first copy's bytes, and a second encoding of
  // them would go unseen).
  RunResult c2 = cli({"copy", "docker-daemon:" + tag + "-b", at2, "--reproducible", epoch},
                     {{"IMGTOOL_CACHE", (d.path / "cache-b").string()}});
  REQUIRE(c1.ok());
  REQUIRE(c2.ok());
  CHECK(digest_of(c1.out) == digest_of(c2.out));
  CHECK(c1.out.find(".pyc rewritten") != std::string::npos);
  CHECK(c2.out.find(", 0 found normalized in the layer cache)") != std::string::npos);
  // The first image again: every layer from the normalized-layer cache, the same digest.
  RunResult again = cli({"copy", "docker-daemon:" + tag + "-a", at2 + "-again", "--reproducible", epoch, "--json"});
  REQUIRE(again.ok());
  auto again_json = nlohmann::json::parse(again.out);
  CHECK(again_json["digest"] == digest_of(c1.out));
  REQUIRE(again_json["layers"].size() >= 2);
  for (const auto& l : again_json["layers"]) CHECK(l["cached"] == true);
  RunResult same = cli({"diff", at1, at2});
  CHECK(same.exit_code == 0);
  if (same.exit_code != 0) where_are(same.out, {tag + "-a", tag + "-b"});
  if (same.out.find("every layer is the same") != std::string::npos) where_blobs_differ(at1, at2, d.path / "blobs");
  CHECK(same.out.rfind("same: " + digest_of(c1.out), 0) == 0);

  // One file changed after the build: another digest, and diff names the layer and the file.
  fs::path ctx = d.path / "changed";
  fs::create_directories(ctx);
  write_file_atomic(ctx / "Dockerfile", "FROM " + tag + "-a\nUSER root\nRUN echo tampered >> /opt/venv/pyvenv.cfg\n");
  must({"docker", "build", "-q", "-t", tag + "-changed", ctx.string()}, {.timeout = std::chrono::seconds(600)});
  std::string at3 = "docker://" + two.host() + "/ai/paddle:changed";
  RunResult c3 = cli({"copy", "docker-daemon:" + tag + "-changed", at3, "--reproducible", epoch});
  REQUIRE(c3.ok());
  CHECK(digest_of(c3.out) != digest_of(c1.out));
  RunResult differ = cli({"diff", at1, at3});
  CHECK(differ.exit_code == 1);
  CHECK(differ.out.find("first differing layer:") != std::string::npos);
  CHECK(differ.out.find("opt/venv/pyvenv.cfg: absent |") != std::string::npos);
}
