// Rebuild = same digest, through the product, on the real CPU cell (Paddle 3.3.1 from the test
// wheelhouse on the local Debian base), the real engine and a loopback docker-registry:
//   `imgtool nightly --reproducible --reproduce 1`: the cell built, normalized and loaded back
//   into the engine, smoked, gated, pushed, signed; then rebuilt with --no-cache and compared with
//   the registry: "reproduced", the published bytes (the report's row);
//   `imgtool reproduce`: the published tag and the engine's image are the rebuild's bytes; an image
//   with one file changed after the build differs, and the file is named -- three images, one
//   rebuild; a matrix whose wheelhouse gained a wheel is other inputs: nothing is rebuilt.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

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

RunResult cli(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  RunResult r = imgtool::testing::imgtool(args, {.timeout = std::chrono::seconds(1800), .env = env});
  MESSAGE("imgtool " << strings::join(args, " ") << " -> " << r.exit_code << "\n" << r.out << r.err);
  return r;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE(
    "nightly --reproducible --reproduce 1, then imgtool reproduce: the published CPU cell is rebuilt byte for byte") {
  ScratchDir d("reproduce");
  // local.yaml under a repository of the test's own (the demo's image keeps its name).
  std::string repo = "imgtool-test-reproduce-" + std::to_string(::getpid()) + "/paddle";
  std::string matrix = (d.path / "local.yaml").string();
  std::string yaml = read_file(source_dir() + "/matrix/local.yaml");
  yaml.replace(yaml.find("repository: paddle-local"), 24, "repository: " + repo);
  write_file_atomic(matrix, yaml);
  std::map<std::string, std::string> env{{"IMGTOOL_WHEELHOUSE", wheelhouse()}, {"IMGTOOL_TEST_BASE", base_image()}};
  std::string image = repo + ":3.3.1", changed = image + "-changed";
  HandBuilt built;  // the cell's image and the changed one go when the test ends
  built.tags = {image, changed};
  RegistryServer reg(RegistryServer::Mode::kHttp, "reproduce");
  REQUIRE(cli({"keygen", "--out", (d.path / "release").string()}, env).ok());
  RunResult n = cli({"nightly", matrix, "--registry", reg.host() + "/ai", "--key", (d.path / "release.key").string(),
                     "--report", (d.path / "report").string(), "--state", (d.path / "state").string(), "--gpus", "none",
                     "--records", (d.path / "records.db").string(), "--reproducible", "--reproduce", "1"},
                    env);
  CHECK(n.exit_code == 0);
  // normalize_built's layers went through the normalized-layer cache (the publish found them there).
  CHECK(has(n.out + n.err, " layer(s) found normalized in the layer cache)"));
  auto cell = nlohmann::json::parse(read_file(d.path / "report" / "nightly.json"))["cells"][0];
  REQUIRE(cell["publish"]["status"] == "published");
  CHECK(cell["built_image_id"] != "");
  CHECK(cell["image_id"] != cell["built_image_id"]);  // the engine holds the normalized image
  CHECK(cell["reproduce"]["outcome"] == "reproduced");
  CHECK(cell["reproduce"]["detail"] == "the published bytes");
  CHECK(has(read_file(d.path / "report" / "report.md"), "- reproduce: reproduced (rebuilt with --no-cache in "));
  std::string digest = cell["publish"]["digest"];
  std::string epoch = strings::trim(
      must({"docker", "image", "inspect", "-f", "{{index .Config.Labels \"io.imgtool.source-date-epoch\"}}", image})
          .out);
  // The engine's image is the normalized one: its config says the cell's epoch, not the build's clock.
  CHECK(strings::trim(must({"docker", "image", "inspect", "-f", "{{.Created}}", image}).out) ==
        strings::utc_rfc3339(std::stoll(epoch)));
  std::string at = "docker://" + reg.host() + "/ai/" + repo + ":3.3.1";

  fs::path ctx = d.path / "changed";
  fs::create_directories(ctx);
  write_file_atomic(ctx / "Dockerfile", "FROM " + image + "\nUSER root\nRUN echo tampered >> /opt/venv/pyvenv.cfg\n");
  must({"docker", "build", "-q", "-t", changed, ctx.string()}, {.timeout = std::chrono::seconds(600)});

  RunResult r = cli({"reproduce", at, "docker-daemon:" + image, "docker-daemon:" + changed, "--matrix", matrix,
                     "--work", d.path.string()},
                    env);
  CHECK(r.exit_code == 1);  // one of the three differs
  CHECK(has(r.out, "reproduced: " + at + " " + digest + " (cell 3.3.1, rebuilt with --no-cache in "));
  CHECK(has(r.out, "reproduced: docker-daemon:" + image + " " + digest + " (cell 3.3.1"));
  // The published bytes: one tar, one gzip stream (image/compress.cc: zlib; ISA-L's deflate gave a
  // block another encoding now and then, which this line once tolerated).
  CHECK(has(r.out, "s; the published bytes)"));
  CHECK_FALSE(has(r.out, "once normalized"));
  CHECK(has(r.out, "differs: docker-daemon:" + changed + " (cell 3.3.1;"));
  auto line = r.out.find("\n  opt/venv/pyvenv.cfg: size ");  // in the changed image's extra layer only
  REQUIRE(line != std::string::npos);
  CHECK(r.out.substr(line, r.out.find('\n', line + 1) - line).ends_with("mtime " + epoch + " | absent"));
  CHECK(has(r.out, "first differing layer: 4 (of 5 and 4)"));
  CHECK(has(r.err, "rebuilding 3.3.1 with --no-cache (3 image(s) to compare)"));
  CHECK(run({"docker", "image", "ls", "--format", "{{.Repository}}"}).out.find("imgtool-reproduce/") ==
        std::string::npos);  // the rebuilds went
  for (const auto& e : fs::directory_iterator(d.path))
    CHECK_MESSAGE(e.path().filename().string().rfind("reproduce-", 0) != 0, e.path());  // the work folder went
  for (const auto& e : fs::directory_iterator(d.path / "state"))
    CHECK_MESSAGE(e.path().filename().string().rfind("reproduce-", 0) != 0, e.path());  // the nightly's too

  // Another wheel in the wheelhouse: other inputs; refused before any build, with the reason.
  fs::path wh = d.path / "wheelhouse";
  fs::create_directories(wh);
  for (const auto& e : fs::directory_iterator(env["IMGTOOL_WHEELHOUSE"]))
    if (e.path().extension() == ".whl") fs::create_hard_link(e.path(), wh / e.path().filename());
  write_file_atomic(wh / "zzz_extra-1.0-py3-none-any.whl", "another wheel");
  env["IMGTOOL_WHEELHOUSE"] = wh.string();
  RunResult other = cli({"reproduce", at, "--matrix", matrix, "--work", d.path.string()}, env);
  CHECK(other.exit_code == 1);
  CHECK(has(other.out, "not rebuilt: " + at + ": the cell's inputs changed since the image was built"));
  CHECK_FALSE(has(other.err, "rebuilding"));

  RunResult bad = cli({"reproduce", "docker://no such ref", "--matrix", matrix}, env);
  CHECK(bad.exit_code == 2);
}
