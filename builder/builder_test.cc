// Unit tests of the build driver with an injected DockerRunner (fault
// injection only: the real engine is exercised by tests/builder_integration_test.cc).
#include <doctest/doctest.h>

#include <deque>
#include <mutex>

#include "builder/build_driver.h"
#include "builder/failure_kind.h"
#include "builder/stage_plan.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"

using namespace imgtool;
using namespace imgtool::builder;

namespace {

// Answers builds from a per-image script of outcomes ("ok" or the output of a
// failure), then "ok"; inspect() reports the images it "built".
class FakeDocker : public DockerRunner {
 public:
  std::map<std::string, std::deque<std::string>> script;  // image -> outcomes
  std::vector<BuildRequest> calls;
  std::map<std::string, LocalImage> images;
  std::mutex mu;

  BuildResult build(const BuildRequest& r) override {
    std::lock_guard lock(mu);
    calls.push_back(r);
    std::string outcome = "ok";
    auto& q = script[r.image];
    if (!q.empty()) {
      outcome = q.front();
      q.pop_front();
    }
    if (outcome != "ok") return {RunResult{1, false, "", outcome}, ""};
    std::string id = sha256_digest(r.image + std::to_string(calls.size()));
    images[r.image] = {id, r.labels};
    return {RunResult{0, false, "Successfully built\n", ""}, id};
  }
  std::optional<LocalImage> inspect(const std::string& ref) override {
    std::lock_guard lock(mu);
    auto it = images.find(ref);
    if (it == images.end()) return std::nullopt;
    return it->second;
  }
  std::string builder_kind() const override { return "fake"; }
};

struct Fixture {
  fs::path root = fs::temp_directory_path() / ("imgtool-builder-test-" + std::to_string(::getpid()));
  Fixture() {
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~Fixture() { fs::remove_all(root); }

  GeneratedCell cell(const std::string& tag, const std::string& python = "3.11",
                     const std::string& dockerfile = "FROM base AS py\nRUN true\nFROM py\nARG PADDLE_VERSION\n") {
    matrix::Cell c;
    c.tag = tag;
    c.python = python;
    c.paddle = "3.2.0";
    c.base_image = "imgtool-base/debian:bookworm-py3";
    nlohmann::json j = {{"cell", c}, {"inputs_hash", sha256_digest(tag + python + dockerfile)}, {"kb_version", "t"}};
    fs::path dir = root / "gen" / tag;
    write_file_atomic(dir / "cell.json", j.dump());
    write_file_atomic(dir / "Dockerfile", dockerfile);
    return load_generated_cell(dir);
  }
  BuildOptions options() {
    BuildOptions o;
    o.jobs = 2;
    o.log_dir = root / "logs";
    o.retry_backoff = std::chrono::milliseconds(1);
    return o;
  }
};

}  // namespace

TEST_CASE("classify_failure: network failures are transient, a failing RUN step is not") {
  CHECK(classify_failure("Get https://r/v2/: net/http: TLS handshake timeout").transient);
  CHECK(classify_failure("read tcp 1.2.3.4: connection reset by peer").transient);
  CHECK(classify_failure("dial tcp: lookup deb.debian.org: Temporary failure in name resolution").transient);
  CHECK(classify_failure("received unexpected HTTP status: 503 Service Unavailable").transient);
  CHECK_FALSE(classify_failure("The command '/bin/sh -c false' returned a non-zero code: 1").transient);
  CHECK_FALSE(classify_failure("COPY failed: file not found in build context").transient);
}

TEST_CASE("a transient failure is retried, then succeeds") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a")};
  FakeDocker docker;
  docker.script["paddle:a"] = {"error: net/http: TLS handshake timeout"};
  StateStore store(f.root / "state");
  auto rep = build_cells(cells, f.options(), docker, store);
  REQUIRE(rep.ok());
  CHECK(rep.cells[0].status == CellStatus::built);
  CHECK(rep.cells[0].attempts == 2);
  CHECK(rep.docker_builds == 2);
  CHECK(read_file(rep.cells[0].log).find("transient failure") != std::string::npos);
}

TEST_CASE("a deterministic failure is not retried, and fails its cell alone") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a", "3.10"), f.cell("b", "3.11"), f.cell("c", "3.12")};
  FakeDocker docker;
  docker.script["paddle:b"] = {"The command '/bin/sh -c exit 3' returned a non-zero code: 3"};
  StateStore store(f.root / "state");
  auto rep = build_cells(cells, f.options(), docker, store);
  CHECK_FALSE(rep.ok());
  CHECK(rep.cells[0].status == CellStatus::built);
  CHECK(rep.cells[1].status == CellStatus::failed);
  CHECK(rep.cells[1].attempts == 1);
  CHECK(rep.cells[1].error.find("non-zero code: 3") != std::string::npos);
  CHECK(rep.cells[2].status == CellStatus::built);
  std::string table = summary_table(rep);
  auto row = table.substr(table.find("\nb "), table.find('\n', table.find("\nb ") + 1) - table.find("\nb "));
  CHECK(row.find("FAILED") != std::string::npos);
  CHECK(table.find("1 failed") != std::string::npos);
}

TEST_CASE("a persistent transient failure gives up after max_attempts") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a")};
  FakeDocker docker;
  docker.script["paddle:a"] = {"i/o timeout", "i/o timeout", "i/o timeout", "i/o timeout"};
  StateStore store(f.root / "state");
  auto rep = build_cells(cells, f.options(), docker, store);
  CHECK(rep.cells[0].status == CellStatus::failed);
  CHECK(rep.cells[0].attempts == 3);
  CHECK(rep.cells[0].error.find("persisted after 3 attempts") != std::string::npos);
}

TEST_CASE("nothing changed: no docker build at all; a changed hash rebuilds that cell only") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a", "3.10"), f.cell("b", "3.11")};
  FakeDocker docker;
  StateStore store(f.root / "state");
  REQUIRE(build_cells(cells, f.options(), docker, store).docker_builds == 3);  // shared stage + 2 cells
  auto again = build_cells(cells, f.options(), docker, store);
  CHECK(again.docker_builds == 0);
  CHECK(again.count(CellStatus::up_to_date) == 2);
  CHECK(summary_table(again).find("nothing changed, nothing built") != std::string::npos);
  cells[1].inputs_hash = sha256_digest("changed");
  auto third = build_cells(cells, f.options(), docker, store);
  CHECK(third.docker_builds == 1);
  CHECK(third.cells[1].status == CellStatus::built);
}

TEST_CASE("an image whose label disagrees with the store is rebuilt") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a")};
  FakeDocker docker;
  StateStore store(f.root / "state");
  build_cells(cells, f.options(), docker, store);
  docker.images["paddle:a"].labels[kInputsHashLabel] = "sha256:other";
  CHECK(build_cells(cells, f.options(), docker, store).docker_builds == 1);
}

TEST_CASE("cells sharing a first stage: it is built once, first, as its own image") {
  Fixture f;
  std::string other = "FROM base AS py\nRUN other\nFROM py\n";
  std::vector<GeneratedCell> cells = {f.cell("a"), f.cell("b", "3.12"), f.cell("c", "3.12", other)};
  FakeDocker docker;
  StateStore store(f.root / "state");
  auto opt = f.options();
  opt.jobs = 1;  // deterministic call order
  auto rep = build_cells(cells, opt, docker, store);
  REQUIRE(rep.ok());
  REQUIRE(docker.calls.size() == 4);  // stage + a + b (one group), c alone (its own group of one)
  CHECK(docker.calls[0].target == "py");
  CHECK(docker.calls[0].image.rfind("imgtool-stage/", 0) == 0);
  CHECK(rep.cells[0].stage_group == rep.cells[1].stage_group);
  CHECK(rep.cells[0].stage_group != rep.cells[2].stage_group);
}

TEST_CASE("single-stage Dockerfiles: the group's leader is built before the others") {
  Fixture f;
  std::string df = "FROM base\nRUN true\n";
  std::vector<GeneratedCell> cells = {f.cell("a", "3.11", df), f.cell("b", "3.11", df + "RUN echo b\n")};
  FakeDocker docker;
  StateStore store(f.root / "state");
  auto rep = build_cells(cells, f.options(), docker, store);
  REQUIRE(docker.calls.size() == 2);
  CHECK(docker.calls[0].image == "paddle:a");
  CHECK(docker.calls[0].target.empty());
}

TEST_CASE("Dockerfile parsing: named first stage and declared ARGs") {
  CHECK(first_stage_text("FROM x AS base\nRUN a\nFROM base\nRUN b\n") == "FROM x AS base\nRUN a\n");
  CHECK(first_named_stage("FROM x AS base\nRUN a\nFROM base\n") == "base");
  CHECK(first_named_stage("FROM x AS base\nRUN a\n") == "");
  CHECK(first_named_stage("FROM x\nFROM y\n") == "");
  auto args = declared_args("ARG BASE_IMAGE=x\nFROM ${BASE_IMAGE}\nARG PYTHON_VERSION\narg PADDLE_VERSION\n");
  CHECK(args == std::vector<std::string>{"BASE_IMAGE", "PYTHON_VERSION", "PADDLE_VERSION"});
}

TEST_CASE("build args: only the ARGs the Dockerfile declares, overrides included") {
  Fixture f;
  auto g = f.cell("a", "3.11", "ARG PYTHON_VERSION\nARG EXTRA\nFROM x\n");
  g.cell.overrides["EXTRA"] = "1";
  auto args = build_args_for(g);
  CHECK(args == std::map<std::string, std::string>{{"EXTRA", "1"}, {"PYTHON_VERSION", "3.11"}});
}

TEST_CASE("generated folder: contract errors are InputErrors naming the file") {
  Fixture f;
  CHECK_THROWS_AS(load_generated_folder(f.root / "missing"), InputError);
  write_file_atomic(f.root / "gen" / "x" / "cell.json", "{\"cell\": {}}");
  CHECK_THROWS_AS(load_generated_folder(f.root / "gen"), InputError);
  fs::remove_all(f.root / "gen");
  f.cell("a");
  f.cell("b");
  auto cells = load_generated_folder(f.root / "gen");
  CHECK(select_tags(cells, {"b"}).size() == 1);
  CHECK_THROWS_AS(select_tags(cells, {"zz"}), InputError);
}
