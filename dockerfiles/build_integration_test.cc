// Integration: one generated cpu cell is really built by the Docker engine
// (classic builder) from the locally made Debian base with the real
// paddlepaddle 3.3.1 wheel from a local wheelhouse; then the image's labels
// are read back and compared with cell.json, and Paddle is imported in it.
// One build only (a minute or two; its images, the first stage included, go at the end).
#include <doctest/doctest.h>
#include <unistd.h>

#include "core/fs.h"
#include "core/process.h"
#include "dockerfiles/generate.h"
#include "dockerfiles/test_cells.h"
#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::dockerfiles;
namespace fs = std::filesystem;

namespace {

std::string last_line(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  auto nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

nlohmann::json inspect(const std::string& ref) {
  auto r = run({"docker", "image", "inspect", ref});
  REQUIRE_MESSAGE(r.ok(), r.err);
  return nlohmann::json::parse(r.out).at(0).at("Config");
}

}  // namespace

TEST_CASE("a generated cpu cell builds with docker and its labels match cell.json") {
  imgtool::testing::ScratchDir d("dockerfiles-build");
  auto cell = dockerfiles::testing::cpu_cell(imgtool::testing::wheelhouse(), imgtool::testing::base_image());
  auto gen = generate({cell}, {d.path / "out", "", "kb-integration"});
  REQUIRE(gen.size() == 1);
  CHECK(gen[0].context_files >= 2);
  fs::path dir = gen[0].dir;
  auto cell_json = nlohmann::json::parse(read_file(dir / "cell.json"));

  imgtool::testing::HandBuilt built;  // the image and its first stage go when the test ends
  std::string ref = "imgtool-test/dockerfiles-build:" + std::to_string(::getpid());
  built.tags.push_back(ref);
  RunOptions o;
  o.env = {{"DOCKER_BUILDKIT", "0"}};
  o.timeout = std::chrono::seconds(1500);
  o.log_path = (d.path / "build.log").string();
  auto b = run(built.docker_build({"-t", ref, dir.string()}), o);
  // Another test's build removing its first stage can prune a cache image this build just hit (what
  // imgtool's builder retries: builder/failure_kind.cc); once more then.
  std::string said = b.out + b.err;
  if (!b.ok() && (said.find("unknown parent image ID") != std::string::npos ||
                  said.find("No such image: sha256:") != std::string::npos))
    b = run(built.docker_build({"-t", ref, dir.string()}), o);
  INFO("docker build output (tail): ", b.out.substr(b.out.size() > 3000 ? b.out.size() - 3000 : 0), b.err);
  REQUIRE(b.ok());
  // The first stage is left behind as one untagged image with the build's mark (what imgtool build
  // removes by it); the cell's image does not carry the mark.
  CHECK(built.stages().size() == 1);

  auto config = inspect(ref);
  auto labels = config.at("Labels");
  CHECK(labels.at("io.imgtool.inputs-hash") == cell_json.at("inputs_hash"));
  CHECK(labels.at("io.imgtool.kb-version") == cell_json.at("kb_version"));
  auto c = cell_json.at("cell");
  CHECK(labels.at("io.imgtool.paddle") == c.at("paddle"));
  CHECK(labels.at("io.imgtool.python") == c.at("python"));
  CHECK(labels.at("io.imgtool.variant") == "cpu");
  CHECK(labels.at("io.imgtool.tag") == c.at("tag"));
  CHECK(labels.at("org.opencontainers.image.version") == c.at("tag"));
  CHECK_FALSE(labels.contains("io.imgtool.cuda"));  // empty claims are omitted
  CHECK_FALSE(labels.contains("io.imgtool.build-stage"));
  CHECK(config.at("User") == "paddle");
  for (auto& e : config.at("Env")) CHECK(e.get<std::string>().rfind("NVIDIA_REQUIRE_CUDA=", 0) != 0);

  auto py = run({"docker", "run", "--rm", ref, "python", "-c", "import paddle; print(paddle.__version__)"});
  INFO(py.err);
  CHECK(py.exit_code == 0);
  CHECK(last_line(py.out) == "3.3.1");

  // No wheels, apt lists or pip cache left in the final image; runs as non-root.
  auto clean = run({"docker", "run", "--rm", ref, "bash", "-c",
                    "test ! -e /tmp/wheels && test -z \"$(ls -A /var/lib/apt/lists)\" && "
                    "test ! -e ~/.cache/pip && id -u"});
  INFO(clean.err);
  CHECK(clean.exit_code == 0);
  CHECK(last_line(clean.out) == "1000");
}
