// Unit tests of the build driver on the fake engine (engine/fake_engine.h: fault
// injection only; the real engine is exercised by builder/builder_integration_test.cc).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <thread>

#include "builder/build_driver.h"
#include "builder/cell_source.h"
#include "builder/failure_kind.h"
#include "builder/stage_plan.h"
#include "builder/state_lock.h"
#include "builder/testing/cell_folder.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/process.h"
#include "core/strings.h"
#include "dockerfiles/stages.h"
#include "engine/fake_engine.h"
#include "image/config.h"
#include "matrix/labels.h"
#include "matrix/testing/cells.h"
#include "tests/fixtures.h"
#include "tests/source_kb.h"

using namespace imgtool;
using namespace imgtool::builder;
using imgtool::engine::FakeEngine;

namespace {

// A Unix socket that accepts connections and never answers: an engine that hangs.
// local.yaml's base with a digest pin: the builder asks the engine nothing before the build.
constexpr const char* kPinnedBase =
    "imgtool-base/debian:bookworm-py3@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

int silent_engine(const fs::path& sock) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(fd, 64) == 0);
  return fd;
}

struct Fixture {
  fs::path root = fs::temp_directory_path() / ("imgtool-builder-test-" + std::to_string(::getpid()));
  Fixture() {
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~Fixture() { fs::remove_all(root); }

  GeneratedCell cell(const std::string& tag, const std::string& python = "3.11",
                     const std::string& dockerfile = "FROM base AS py\nRUN true\nFROM py\nARG PADDLE_VERSION\n") {
    matrix::Cell c = matrix::testing::cell(tag);
    c.python = python;
    return builder::testing::write_cell(root / "gen" / tag, {.cell = c}, dockerfile);
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
  // A cache image removed under the build (seen in the suite: another build's stage removal pruned it).
  CHECK(classify_failure("failed to export image: failed to set parent sha256:24fab69cf1d3: unknown parent image ID "
                         "sha256:24fab69cf1d3")
            .transient);
  CHECK_FALSE(classify_failure("The command '/bin/sh -c false' returned a non-zero code: 1").transient);
  CHECK_FALSE(classify_failure("COPY failed: file not found in build context").transient);
}

TEST_CASE("a transient failure is retried, then succeeds") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a")};
  FakeEngine docker;
  docker.build_script["paddle:a"] = {"error: net/http: TLS handshake timeout"};
  StateStore store(f.root / "state");
  auto rep = build_cells(cells, f.options(), docker, store);
  REQUIRE(rep.ok());
  CHECK(rep.cells[0].status == CellStatus::built);
  CHECK(rep.cells[0].attempts == 2);
  CHECK(rep.docker_builds == 2);
  CHECK(read_file(rep.cells[0].log).find("transient failure") != std::string::npos);
}

TEST_CASE(
    "a failed RUN of many commands keeps its exit code in the cell's error (the start and the end of a long line)") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a", "3.11")};
  FakeEngine docker;
  docker.build_script["paddle:a"] = {"The command '/bin/bash -o pipefail -c { missing=\"\"; " + std::string(500, 'x') +
                                     " && useradd paddle' returned a non-zero code: 4"};
  StateStore store(f.root / "state");
  auto rep = build_cells(cells, f.options(), docker, store);
  REQUIRE(rep.cells[0].status == CellStatus::failed);
  CHECK(rep.cells[0].error.find("The command '/bin/bash -o pipefail -c { missing=") != std::string::npos);
  CHECK(rep.cells[0].error.find(" … ") != std::string::npos);
  CHECK(rep.cells[0].error.find("useradd paddle' returned a non-zero code: 4") != std::string::npos);
  CHECK(rep.cells[0].error.size() < 300);
}

TEST_CASE("a deterministic failure is not retried, and fails its cell alone") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a", "3.10"), f.cell("b", "3.11"), f.cell("c", "3.12")};
  FakeEngine docker;
  docker.build_script["paddle:b"] = {"The command '/bin/sh -c exit 3' returned a non-zero code: 3"};
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
  FakeEngine docker;
  docker.build_script["paddle:a"] = {"i/o timeout", "i/o timeout", "i/o timeout", "i/o timeout"};
  StateStore store(f.root / "state");
  auto rep = build_cells(cells, f.options(), docker, store);
  CHECK(rep.cells[0].status == CellStatus::failed);
  CHECK(rep.cells[0].attempts == 3);
  CHECK(rep.cells[0].error.find("persisted after 3 attempts") != std::string::npos);
}

TEST_CASE("nothing changed: no docker build at all; a changed hash rebuilds that cell only") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a", "3.10"), f.cell("b", "3.11")};
  FakeEngine docker;
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

TEST_CASE("the engine's base (base_pin.h): another one rebuilds the cell; an engine without it goes by the inputs") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a")};
  std::string made = "sha256:" + std::string(64, '1'), again = "sha256:" + std::string(64, '2');
  cells[0].cell.base_id = made;
  FakeEngine docker;
  StateStore store(f.root / "state");
  REQUIRE(build_cells(cells, f.options(), docker, store).ok());
  // The generated Dockerfile's LABEL io.imgtool.base-id, which the double does not read.
  docker.find("paddle:a")->labels[labels::kBaseId] = made;
  CHECK(build_cells(cells, f.options(), docker, store).docker_builds == 0);
  cells[0].cell.base_id = again;  // the base made again: the same inputs hash, another base
  auto rebuilt = build_cells(cells, f.options(), docker, store);
  CHECK(rebuilt.docker_builds == 1);
  CHECK(rebuilt.cells[0].status == CellStatus::built);
  docker.find("paddle:a")->labels[labels::kBaseId] = again;
  cells[0].cell.base_id.clear();  // a GPU host given the image, without its base: the inputs decide
  CHECK(build_cells(cells, f.options(), docker, store).docker_builds == 0);
}

TEST_CASE("a registry's pin (base_pin.h): a base tag that moved since the image was built rebuilds the cell") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a")};
  std::string d1 = "sha256:" + std::string(64, '1'), d2 = "sha256:" + std::string(64, '2');
  cells[0].cell.base_from = cells[0].cell.base_image + "@" + d1;  // the engine lacks the base: no base_id
  FakeEngine docker;
  StateStore store(f.root / "state");
  REQUIRE(build_cells(cells, f.options(), docker, store).ok());
  // The generated Dockerfile's LABEL org.opencontainers.image.base.digest, which the double does not read.
  CHECK(build_cells(cells, f.options(), docker, store).docker_builds == 1);  // no label: built on an unknown base
  docker.find("paddle:a")->labels[labels::kBaseDigest] = d1;
  CHECK(build_cells(cells, f.options(), docker, store).docker_builds == 0);
  cells[0].cell.base_from = cells[0].cell.base_image + "@" + d2;  // the tag moved: same inputs hash, another base
  auto rebuilt = build_cells(cells, f.options(), docker, store);
  CHECK(rebuilt.docker_builds == 1);
  CHECK(rebuilt.cells[0].status == CellStatus::built);
}

TEST_CASE("a rebuilt cell's previous image goes once no name holds it (no dangling cell images left)") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a")};
  FakeEngine docker;
  StateStore store(f.root / "state");
  std::vector<std::string> events;
  auto opt = f.options();
  opt.on_event = [&](const std::string& line) { events.push_back(line); };
  REQUIRE(build_cells(cells, opt, docker, store).ok());
  std::string first = docker.find("paddle:a")->id;
  cells[0].inputs_hash = sha256_digest("changed");
  REQUIRE(build_cells(cells, opt, docker, store).docker_builds == 1);
  CHECK(docker.find("paddle:a")->id != first);
  CHECK_FALSE(docker.inspect(first));  // before: left dangling, one image per rebuild
  CHECK(std::any_of(events.begin(), events.end(),
                    [&](auto& e) { return e.find("removed " + first.substr(0, 19)) != std::string::npos; }));
  CHECK(docker.find("paddle:a"));  // the new one, named
}

TEST_CASE("the image a tag held goes when another state folder's build takes the tag (the demo and the tests)") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a")};
  FakeEngine docker;
  StateStore tests(f.root / "state-tests"), demo(f.root / "state-demo");
  REQUIRE(build_cells(cells, f.options(), docker, tests).ok());
  std::string first = docker.find("paddle:a")->id;
  REQUIRE(build_cells(cells, f.options(), docker, demo).docker_builds == 1);  // no record in this state
  CHECK_FALSE(docker.inspect(first));  // no name held it any more: gone, not left dangling
  CHECK(docker.find("paddle:a"));
}

TEST_CASE(
    "normalize: the built image normalized and loaded back under its name, the build's removed; a rebuild is the same "
    "image") {
  Fixture f;
  GeneratedCell g = f.cell("a");
  g.labels[labels::kSourceDateEpoch] = "1767225600";
  FakeEngine docker;
  docker.reproducible_builds = true;  // the double: the same labels give the same build
  StateStore store(f.root / "state");
  auto opt = f.options();
  opt.normalize = true;
  opt.normalize_rules =
      image::read_normalize_rules(fs::path(imgtool::testing::source_dir()) / "image/normalize_rules.tsv");
  auto first = build_cells({g}, opt, docker, store);
  REQUIRE(first.ok());
  const CellBuild& b = first.cells[0];
  REQUIRE_FALSE(b.built_id.empty());
  CHECK(b.image_id != b.built_id);
  CHECK(docker.find("paddle:a")->id == b.image_id);
  CHECK_FALSE(docker.inspect(b.built_id));  // the image the build made went
  auto src = docker.save("paddle:a");
  image::ImageConfig cfg = image::read_image_config(*src, src->manifest());
  CHECK(cfg.created == "2026-01-01T00:00:00Z");  // the cell's epoch, not the build's clock
  CHECK(cfg.label(labels::kInputsHash) == g.inputs_hash);
  CHECK(store.last_build("a")->image_id == b.image_id);
  auto again = build_cells({g}, opt, docker, store);
  CHECK(again.docker_builds == 0);  // up to date: the normalized image carries the inputs hash
  CHECK(again.cells[0].image_id == b.image_id);
  opt.force = true;
  auto rebuilt = build_cells({g}, opt, docker, store);
  REQUIRE(rebuilt.docker_builds == 1);
  CHECK(rebuilt.cells[0].image_id == b.image_id);  // rebuild = same image
}

TEST_CASE("normalize: an up-to-date image the build made as it was is not the normalized one: built again") {
  Fixture f;
  GeneratedCell g = f.cell("a");
  g.labels[labels::kSourceDateEpoch] = "1767225600";
  FakeEngine docker;
  StateStore store(f.root / "state");
  auto opt = f.options();
  REQUIRE(build_cells({g}, opt, docker, store).ok());
  opt.normalize = true;
  auto rep = build_cells({g}, opt, docker, store);
  CHECK(rep.docker_builds == 1);
  CHECK_FALSE(rep.cells[0].built_id.empty());
  CHECK(build_cells({g}, opt, docker, store).docker_builds == 0);
}

TEST_CASE("normalize: a cell without its epoch label fails alone, naming the label; nothing is left under the name") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a"), f.cell("b")};
  cells[1].labels[labels::kSourceDateEpoch] = "1767225600";
  FakeEngine docker;
  StateStore store(f.root / "state");
  auto opt = f.options();
  opt.normalize = true;
  auto rep = build_cells(cells, opt, docker, store);
  CHECK(rep.cells[0].status == CellStatus::failed);
  CHECK(rep.cells[0].error == "normalize: the cell sets no io.imgtool.source-date-epoch label (regenerate it)");
  CHECK_FALSE(docker.find("paddle:a"));
  CHECK_FALSE(store.last_build("a"));
  CHECK(rep.cells[1].status == CellStatus::built);
}

TEST_CASE("an image whose label disagrees with the store is rebuilt") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("a")};
  FakeEngine docker;
  StateStore store(f.root / "state");
  build_cells(cells, f.options(), docker, store);
  docker.find("paddle:a")->labels[kInputsHashLabel] = "sha256:other";
  CHECK(build_cells(cells, f.options(), docker, store).docker_builds == 1);
}

TEST_CASE("cells sharing a first stage: it is built once, first, as its own image") {
  Fixture f;
  std::string other = "FROM base AS py\nRUN other\nFROM py\n";
  std::vector<GeneratedCell> cells = {f.cell("a"), f.cell("b", "3.12"), f.cell("c", "3.12", other)};
  FakeEngine docker;
  StateStore store(f.root / "state");
  auto opt = f.options();
  opt.jobs = 1;  // deterministic call order
  auto rep = build_cells(cells, opt, docker, store);
  REQUIRE(rep.ok());
  REQUIRE(docker.builds.size() == 4);  // stage + a + b (one group), c alone (its own group of one)
  CHECK(docker.builds[0].target == "py");
  CHECK(docker.builds[0].image.rfind("imgtool-stage/", 0) == 0);
  CHECK(rep.cells[0].stage_group == rep.cells[1].stage_group);
  CHECK(rep.cells[0].stage_group != rep.cells[2].stage_group);
}

TEST_CASE("single-stage Dockerfiles: the group's leader is built before the others") {
  Fixture f;
  std::string df = "FROM base\nRUN true\n";
  std::vector<GeneratedCell> cells = {f.cell("a", "3.11", df), f.cell("b", "3.11", df + "RUN echo b\n")};
  FakeEngine docker;
  StateStore store(f.root / "state");
  auto rep = build_cells(cells, f.options(), docker, store);
  REQUIRE(docker.builds.size() == 2);
  CHECK(docker.builds[0].image == "paddle:a");
  CHECK(docker.builds[0].target.empty());
}

TEST_CASE("stage groups come from cell.json (the generator's stage and key), never from re-parsing the Dockerfile") {
  Fixture f;
  auto a = f.cell("a"), b = f.cell("b"), c = f.cell("c", "3.12", "FROM base\nRUN true\n");
  b.stage_key = a.stage_key;  // what the generator wrote
  auto groups = group_by_base({a, b, c});
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].key == a.stage_key);
  CHECK(groups[0].stage == "py");
  CHECK(groups[0].cells == std::vector<size_t>{0, 1});
  CHECK(groups[1].stage.empty());  // single stage: grouped by the base fields
  CHECK(dockerfiles::shared_stage("FROM x AS base\nRUN a\nFROM base\nRUN b\n").stage == "base");
  CHECK(dockerfiles::shared_stage("FROM x AS base\nRUN a\n").stage.empty());
  CHECK(dockerfiles::shared_stage("FROM x\nFROM y\n").stage.empty());
  CHECK(dockerfiles::shared_stage("from --platform=linux/amd64 x as b\nRUN a\nFROM b\n").stage == "b");
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

TEST_CASE("generated folder: cell.json is input — a tag, repository, stage or stage key that is not one is refused") {
  Fixture f;
  auto hostile = [&](const std::string& field, const nlohmann::json& value) {
    nlohmann::json j = {{"cell", matrix::Cell{.tag = "ok"}},
                        {"inputs_hash", sha256_digest("x")},
                        {"kb_version", "t"},
                        {"build", {{"stage", "build"}, {"stage_key", "0123456789ab"}}}};
    j[nlohmann::json::json_pointer(field)] = value;
    fs::path dir = f.root / "hostile";
    write_file_atomic(dir / "cell.json", j.dump());
    write_file_atomic(dir / "Dockerfile", "FROM base\n");
    try {
      load_generated_cell(dir);
      return std::string("loaded");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
  };
  CHECK(hostile("/cell/tag", "ok") == "loaded");
  // Before: each was loaded; the tag became logs/../../x.log, the key a line of bake.sh.
  CHECK(hostile("/cell/tag", "../../x").find("cell.json: cell.tag: expected a Docker tag") != std::string::npos);
  CHECK(hostile("/cell/tag", "").find("cell.tag: expected a Docker tag") != std::string::npos);
  CHECK(hostile("/build/stage_key", "$(touch /tmp/pwned)")
            .find("build.stage_key: expected 12 lowercase hex digits or none, "
                  "found '$(touch /tmp/pwned)'") != std::string::npos);
  CHECK(hostile("/build/stage_key", "0123456789AB").find("build.stage_key") != std::string::npos);
  CHECK(hostile("/build/stage", "b; rm -rf /").find("build.stage: expected a stage name") != std::string::npos);
  CHECK(hostile("/cell/repository", "../paddle").find("cell.repository: expected a Docker image name") !=
        std::string::npos);
  CHECK(hostile("/build/stage_key", "") == "loaded");  // no shared stage
}

TEST_CASE("a build task that throws becomes a FAILED cell with its reason; the other cells build") {
  Fixture f;
  std::vector<GeneratedCell> cells = {f.cell("throws", "3.10"), f.cell("a", "3.11"), f.cell("b", "3.11")};
  FakeEngine docker;  // the engine goes away for one image: build() throws instead of returning
  docker.build_script["paddle:throws"] = {"throw:docker: engine connection refused"};
  StateStore store(f.root / "state");
  auto rep = build_cells(cells, f.options(), docker, store);
  CHECK_FALSE(rep.ok());
  CHECK(rep.cells[0].status == CellStatus::failed);
  CHECK(rep.cells[0].error.find("engine connection refused") != std::string::npos);
  CHECK(rep.cells[1].status == CellStatus::built);
  CHECK(rep.cells[2].status == CellStatus::built);
}

TEST_CASE("one run per state folder: a second run on the same folder is refused with a clear message") {
  Fixture f;
  {
    StateStore first(f.root / "state");
    try {
      StateStore second(f.root / "state");
      FAIL("a second store on the same folder was opened");
    } catch (const Error& e) {
      std::string msg = e.what();
      CHECK(msg.find((f.root / "state").string()) != std::string::npos);
      CHECK(msg.find("in use by another imgtool run (pid " + std::to_string(::getpid())) != std::string::npos);
      CHECK(msg.find("--state") != std::string::npos);
    }
    // Another folder is independent.
    CHECK_NOTHROW(StateStore(f.root / "other"));
  }
  // Released with the first run.
  CHECK_NOTHROW(StateStore(f.root / "state"));
}

TEST_CASE("one run per state folder: a second process is refused while the first holds it") {
  Fixture f;
  StateLock held(f.root / "state");
  pid_t child = ::fork();
  if (child == 0) {
    int rc = 0;
    try {
      StateLock again(f.root / "state");
    } catch (const Error&) {
      rc = 7;
    }
    ::_exit(rc);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 7);
}

// Processes whose command line mentions `text` (the test's own scratch folder).
int processes_mentioning(const std::string& text) {
  int n = 0;
  for (auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos || name == std::to_string(::getpid())) continue;
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    n += cmd.find(text) != std::string::npos;
  }
  return n;
}

// Two imgtool processes on one state folder. The first holds the folder while its build waits on
// an engine that never answers (a Unix socket listened on and never accepted); the second is
// refused at once, naming the first's pid. The first, killed, ends its docker build too (it runs
// under timeout(1), in a process group of its own: it was left running), and the folder is free.
TEST_CASE("one run per state folder: a second imgtool process is refused while the first runs") {
  Fixture f;
  fs::path sock = f.root / "silent.sock", state = f.root / "state", wh = f.root / "wh";
  write_file_atomic(wh / "paddlepaddle-3.3.1-cp311-cp311-manylinux1_x86_64.whl", "paddle wheel");
  int silent = silent_engine(sock);
  std::string bin = imgtool::testing::imgtool_bin(), matrix = imgtool::testing::source_dir() + "/matrix/local.yaml";
  RunOptions o;
  // The base pinned in the matrix (a digest): a tag-only one would be inspected first (base_pin.h),
  // and that request, not a build, would be what waits on the silent engine.
  o.env = {{"IMGTOOL_WHEELHOUSE", wh.string()},
           {"DOCKER_HOST", "unix://" + sock.string()},
           {"IMGTOOL_TEST_BASE", kPinnedBase}};
  o.timeout = std::chrono::seconds(20);
  pid_t first = ::fork();
  if (first == 0) {
    for (auto& [k, v] : o.env) ::setenv(k.c_str(), v.c_str(), 1);
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1), ::dup2(null, 2);
    ::execl(bin.c_str(), bin.c_str(), "build", matrix.c_str(), "--state", state.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::string holder;
  for (int i = 0; i < 600 && holder.empty(); ++i) {  // the first writes its pid once it holds the lock
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::error_code ec;
    if (fs::exists(state / "lock", ec)) holder = read_file(state / "lock");
    while (!holder.empty() && holder.back() == '\n') holder.pop_back();
  }
  REQUIRE(holder == std::to_string(first));
  auto second = imgtool::testing::imgtool({"build", matrix, "--state", state.string()}, o);
  INFO("second: " << second.err);
  CHECK_FALSE(second.timed_out);
  CHECK(second.exit_code == 1);
  CHECK(second.err.find("state folder " + state.string() + " is in use by another imgtool run (pid " + holder + ")") !=
        std::string::npos);
  // The first is waiting on the engine with a docker build under it: killed, it takes that along.
  // Killed earlier, while timeout(1) was still starting docker, that docker build could be left.
  for (int i = 0; i < 200 && processes_mentioning(f.root.string()) < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(processes_mentioning(f.root.string()) == 3);  // imgtool, timeout, docker build
  ::kill(first, SIGTERM);
  int status = 0;
  REQUIRE(::waitpid(first, &status, 0) == first);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM));
  int left = 1;
  for (int i = 0; i < 100 && (left = processes_mentioning(f.root.string())) > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(left == 0);
  ::close(silent);
  o.env["DOCKER_HOST"] = "unix://" + (f.root / "no-engine.sock").string();
  auto third = imgtool::testing::imgtool({"build", matrix, "--state", state.string()}, o);
  INFO("third: " << third.err);
  CHECK_FALSE(third.timed_out);
  CHECK(third.err.find("is in use") == std::string::npos);
}

// imgtool killed mid-build (SIGTERM: a CI cancel; SIGINT: Ctrl-C) while its `docker build` waits on an
// engine that never answers: the build's private temp folder (imgtool-build-XXXXXX, the image-ID
// file) goes with it. Before, it stayed in $TMPDIR after every killed run.
TEST_CASE("a killed imgtool leaves no private temp folder behind (SIGTERM, SIGINT)") {
  for (int sig : {SIGTERM, SIGINT}) {
    CAPTURE(sig);
    Fixture f;
    fs::path sock = f.root / "silent.sock", state = f.root / "state", wh = f.root / "wh", tmp = f.root / "tmp";
    fs::create_directories(tmp);
    write_file_atomic(wh / "paddlepaddle-3.3.1-cp311-cp311-manylinux1_x86_64.whl", "paddle wheel");
    int silent = silent_engine(sock);
    std::string bin = imgtool::testing::imgtool_bin(), matrix = imgtool::testing::source_dir() + "/matrix/local.yaml";
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("IMGTOOL_WHEELHOUSE", wh.c_str(), 1);
      ::setenv("DOCKER_HOST", ("unix://" + sock.string()).c_str(), 1);
      ::setenv("TMPDIR", tmp.c_str(), 1);
      ::setenv("IMGTOOL_TEST_BASE", kPinnedBase, 1);  // no inspect before the build (as above)
      int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1), ::dup2(null, 2);
      ::execl(bin.c_str(), bin.c_str(), "build", matrix.c_str(), "--state", state.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    auto ours = [&] {  // imgtool's folders in $TMPDIR
      std::vector<std::string> names;
      for (auto& e : fs::directory_iterator(tmp))
        if (e.path().filename().string().rfind("imgtool-", 0) == 0) names.push_back(e.path().filename().string());
      return names;
    };
    bool mid_build = false;  // the build's folder exists and its docker build is running
    for (int i = 0; i < 600 && !mid_build; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      auto names = ours();
      mid_build = std::any_of(names.begin(), names.end(), [](auto& n) { return n.rfind("imgtool-build-", 0) == 0; }) &&
                  processes_mentioning(f.root.string()) >= 3;  // imgtool, timeout, docker build
    }
    REQUIRE(mid_build);
    ::kill(pid, sig);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == sig));
    INFO("left in $TMPDIR: " << strings::join(ours(), ", "));
    CHECK(ours().empty());
    for (int i = 0; i < 100 && processes_mentioning(f.root.string()) > 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ::close(silent);
  }
}

TEST_CASE("a cell that cannot be generated (no wheel for it) fails alone; the others are generated and build") {
  Fixture f;
  fs::path wh = f.root / "wh";
  write_file_atomic(wh / "paddlepaddle-3.3.1-cp311-cp311-manylinux1_x86_64.whl", "paddle wheel");
  fs::path matrix = f.root / "two.yaml";
  write_file_atomic(matrix,
                    "repository: paddle-local\n"
                    "axes:\n  variant: cpu\n  paddle: [\"3.3.1\", \"3.1.0\"]\n  python: \"3.11\"\n"
                    "  os: debian12\n  flavor: runtime\n"
                    "defaults:\n  python_from: base\n  base_image: \"imgtool-base/debian:bookworm-py3\"\n"
                    "  wheelhouse: \"" +
                        wh.string() + "\"\n");
  CellSource src = load_cells(matrix, f.root / "state",
                              imgtool::testing::source_kb());  // before: InputError for every cell (exit 2)
  REQUIRE(src.cells.size() == 2);
  const GeneratedCell* bad = nullptr;
  for (auto& c : src.cells)
    if (c.cell.paddle == "3.1.0") bad = &c;
  REQUIRE(bad != nullptr);
  CHECK(bad->generate_error.find("no wheel") != std::string::npos);
  FakeEngine docker;
  StateStore store(f.root / "state");
  auto rep = build_cells(src.cells, f.options(), docker, store);
  CHECK_FALSE(rep.ok());
  for (auto& c : rep.cells) {
    bool is_bad = c.tag == bad->cell.tag;
    CHECK(c.status == (is_bad ? CellStatus::failed : CellStatus::built));
    if (is_bad) CHECK(c.error.find("generate: ") == 0);
  }
  CHECK(docker.builds.size() == 1);  // nothing built for the bad cell
}

TEST_CASE(
    "several inputs are one run: cells of every matrix, sorted by tag; a tag in two inputs or two files of one name "
    "are refused") {
  Fixture f;
  fs::path wh = f.root / "wh";
  write_file_atomic(wh / "paddlepaddle-3.2.0-cp311-cp311-manylinux1_x86_64.whl", "paddle wheel");
  write_file_atomic(wh / "paddlepaddle-3.1.0-cp311-cp311-manylinux1_x86_64.whl", "paddle wheel");
  auto matrix = [&](const fs::path& path, const std::string& paddle) {
    write_file_atomic(path,
                      "repository: paddle-local\n"
                      "axes:\n  variant: cpu\n  paddle: \"" +
                          paddle +
                          "\"\n  python: \"3.11\"\n"
                          "  os: debian12\n  flavor: runtime\n"
                          "defaults:\n  python_from: base\n  base_image: \"imgtool-base/debian:bookworm-py3\"\n"
                          "  wheelhouse: \"" +
                          wh.string() + "\"\n");
    return path;
  };
  fs::path a = matrix(f.root / "a.yaml", "3.2.0"), b = matrix(f.root / "b.yaml", "3.1.0");
  CellSource src = load_cells(std::vector<fs::path>{a, b}, f.root / "state", imgtool::testing::source_kb());
  REQUIRE(src.cells.size() == 2);
  CHECK(src.cells[0].cell.tag == "3.1.0");  // sorted across inputs
  CHECK(src.cells[1].cell.tag == "3.2.0");
  CHECK(src.generated_dirs == std::vector<fs::path>{f.root / "state/generated/a", f.root / "state/generated/b"});
  for (auto& c : src.cells) CHECK(c.generate_error.empty());
  FakeEngine docker;
  StateStore store(f.root / "state2");
  CHECK(build_cells(src.cells, f.options(), docker, store).ok());
  CHECK(docker.builds.size() == 2);

  fs::path again = matrix(f.root / "c.yaml", "3.2.0");  // 3.2.0 is a.yaml's tag too
  CHECK_THROWS_WITH_AS(
      load_cells(std::vector<fs::path>{a, again}, f.root / "state", imgtool::testing::source_kb()),
      (again.string() + ": expected tags no other input has, found '3.2.0' in " + a.string() + " too").c_str(),
      InputError);
  fs::create_directories(f.root / "other");
  fs::path same_stem = matrix(f.root / "other/a.yaml", "3.1.0");
  CHECK_THROWS_WITH_AS(load_cells(std::vector<fs::path>{a, same_stem}, f.root / "state", imgtool::testing::source_kb()),
                       doctest::Contains("expected matrix files with different names, found 'a'"), InputError);
}

TEST_CASE("a label cell.json says the Dockerfile sets is not passed again as --label (one classic-builder step each)") {
  Fixture f;
  const std::string hash = "sha256:" + std::string(64, 'a');
  dockerfiles::CellFile file{
      .cell = matrix::testing::cell("t1"),
      .inputs_hash = hash,
      .kb_version = "kb1",
      .labels = {{"io.imgtool.tag", "t1"}, {"io.imgtool.kb-version", "kb1"}, {"io.imgtool.inputs-hash", hash}}};
  auto g = builder::testing::write_cell(f.root / "gen/t1", file);  // its Dockerfile is never read by the builder
  FakeEngine docker;
  StateStore store(f.root / "state");
  REQUIRE(build_cells({g}, f.options(), docker, store).ok());
  REQUIRE(docker.builds.size() == 1);
  auto& labels = docker.builds[0].labels;
  CHECK(labels.count("io.imgtool.stage-key") == 1);  // not in cell.json's list: passed
  CHECK(labels.count("io.imgtool.tag") == 0);
  CHECK(labels.count("io.imgtool.kb-version") == 0);
  CHECK(labels.count("io.imgtool.inputs-hash") == 0);
  // Another value does not count, nor does a cell.json without the list (an older generator).
  file.labels = {{"io.imgtool.kb-version", "other"}};
  write_file_atomic(f.root / "gen/t1/cell.json", nlohmann::json(file).dump());
  FakeEngine again;
  StateStore store2(f.root / "state2");
  REQUIRE(build_cells({load_generated_cell(f.root / "gen/t1")}, f.options(), again, store2).ok());
  CHECK(again.builds.at(0).labels.count("io.imgtool.tag") == 1);
  CHECK(again.builds.at(0).labels.at("io.imgtool.kb-version") == "kb1");
  CHECK(again.builds.at(0).labels.at("io.imgtool.inputs-hash") == hash);
}
