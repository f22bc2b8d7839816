// `imgtool prune`'s engine rule without a network: on the fake engine after real
// build_cells runs (so the labels are the ones the builder really sets). The
// registry rule: nightly/registry_prune_test.cc (its plan) and
// nightly/prune_registry_test.cc (a real docker-registry).
#include "builder/prune.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "builder/build_driver.h"
#include "builder/testing/cell_folder.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "dockerfiles/stages.h"
#include "engine/fake_engine.h"
#include "matrix/labels.h"
#include "matrix/testing/cells.h"

using namespace imgtool;
using namespace imgtool::builder;
using imgtool::engine::FakeEngine;

namespace {

struct Host {
  fs::path root = fs::temp_directory_path() / ("imgtool-prune-test-" + std::to_string(::getpid()));
  FakeEngine docker;
  Host() {
    fs::remove_all(root);
    fs::create_directories(root);
    docker.stage_mark_arg = labels::kBuildStageArg;  // the classic builder leaves first stages behind
    docker.stage_mark_label = labels::kBuildStage;
  }
  ~Host() { fs::remove_all(root); }

  GeneratedCell cell(const std::string& tag, const std::string& first_stage) {
    std::string dockerfile = "FROM base AS build\n" + first_stage + "\nFROM base\nCOPY --from=build /x /x\n";
    return builder::testing::write_cell(root / "gen" / tag, {.cell = matrix::testing::cell(tag)}, dockerfile);
  }

  // The builder's real run over `cells` on the fake engine.
  void build(const std::vector<GeneratedCell>& cells, bool keep_stages = true) {
    BuildOptions o;
    o.log_dir = root / "logs";
    o.keep_stages = keep_stages;
    StateStore store(root / "state");
    REQUIRE(build_cells(cells, o, docker, store).ok());
  }

  std::vector<std::string> names() {
    std::vector<std::string> v;
    for (auto& i : docker.list_images({})) v.insert(v.end(), i.repo_tags.begin(), i.repo_tags.end());
    std::sort(v.begin(), v.end());
    return v;
  }
};

std::vector<std::string> whats(const std::vector<PruneItem>& items, PruneKind k) {
  std::vector<std::string> v;
  for (const auto& i : items)
    if (i.kind == k) v.push_back(i.what);
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("engine prune: after a stage change, the old stage image and dangling cell images go; current ones stay") {
  Host h;
  auto v1 = std::vector<GeneratedCell>{h.cell("a", "RUN pip install paddle==3.1"),
                                       h.cell("b", "RUN pip install paddle==3.1")};
  h.build(v1);
  std::string old_stage = "imgtool-stage/" + v1[0].stage_key + ":build";
  std::string old_a = h.docker.inspect("paddle:a")->id, old_b = h.docker.inspect("paddle:b")->id;
  CHECK(h.docker.inspect("paddle:a")->labels.at(labels::kStageKey) == v1[0].stage_key);
  CHECK(h.docker.inspect(old_stage)->labels.at(labels::kStageKey) == v1[0].stage_key);

  auto v2 = std::vector<GeneratedCell>{h.cell("a", "RUN pip install paddle==3.2"),
                                       h.cell("b", "RUN pip install paddle==3.2")};
  h.build(v2);
  std::string new_stage = "imgtool-stage/" + v2[0].stage_key + ":build";
  // The builder removed the cell images the rebuild replaced (no name held them); one left dangling
  // some other way (a build whose record was lost, an older imgtool) is prune's.
  CHECK_FALSE(h.docker.inspect(old_a));
  CHECK_FALSE(h.docker.inspect(old_b));
  std::string stray = h.docker.add_image({}, {.labels = {{labels::kTag, "a"}}}).id;
  h.docker.add_image({"user/own:1"});                          // no imgtool label: never touched
  h.docker.add_image({}, {.labels = {{"maintainer", "me"}}});  // dangling, but not imgtool's

  auto before = h.docker.list_images({}).size();
  PruneReport dry = prune_engine(h.docker, true);
  CHECK(whats(dry.removed, PruneKind::stage_image) == std::vector<std::string>{old_stage});
  // The stray cell image, and the four untagged first stages the two --keep-stages runs left.
  auto kept_stages = h.docker.list_images({.labels = {labels::kBuildStage}, .dangling = true});
  CHECK(kept_stages.size() == 4);
  std::vector<std::string> dangling = {stray};
  for (const auto& k : kept_stages) dangling.push_back(k.id);
  std::sort(dangling.begin(), dangling.end());
  CHECK(whats(dry.removed, PruneKind::dangling_image) == dangling);
  CHECK(h.docker.list_images({}).size() == before);  // a dry run removes nothing
  CHECK(render_text(dry).find("would remove stage-image " + old_stage) != std::string::npos);

  PruneReport done = prune_engine(h.docker, false);
  CHECK(done.ok());
  CHECK(done.removed.size() == 6);
  CHECK(h.docker.list_images({}).size() == before - 6);
  CHECK(h.names() == std::vector<std::string>{new_stage, "paddle:a", "paddle:b", "user/own:1"});
  CHECK(prune_engine(h.docker, false).removed.empty());  // nothing left to do
}

TEST_CASE("engine prune: a stage image stays for a cell image built before the stage-key label (by stage-of)") {
  Host h;
  h.docker.add_image({"imgtool-stage/abc123abc123:build"}, {.labels = {{labels::kStageOf, "a"}}});
  h.docker.add_image({"imgtool-stage/def456def456:build"}, {.labels = {{labels::kStageOf, "gone"}}});
  h.docker.add_image({"paddle:a"}, {.labels = {{labels::kTag, "a"}, {labels::kInputsHash, "sha256:1"}}});
  auto items = prune_engine(h.docker, true).removed;
  CHECK(whats(items, PruneKind::stage_image) == std::vector<std::string>{"imgtool-stage/def456def456:build"});
  CHECK(whats(items, PruneKind::dangling_image).empty());
}

namespace {
std::vector<GeneratedCell> three_cells(Host& h) {  // a and b share their first stage
  return {h.cell("a", "RUN pip install paddle==3.1"), h.cell("b", "RUN pip install paddle==3.1"),
          h.cell("c", "RUN other")};
}
}  // namespace

TEST_CASE("build: without --keep-stages no first stage outlives the run; with it, they stay and prune takes them") {
  {
    Host h;
    auto cells = three_cells(h);
    h.build(cells, false);
    // Only the cell images: the shared stage of a+b (tagged for the run) and the three untagged first
    // stages (one per cell build, each with its own mark) are gone.
    CHECK(h.names() == std::vector<std::string>{"paddle:a", "paddle:b", "paddle:c"});
    CHECK(h.docker.list_images({.labels = {labels::kBuildStage}}).empty());
    CHECK(h.docker.list_images({}).size() == 3);
    // Every docker build carried a mark of its own.
    std::set<std::string> marks;
    for (const auto& b : h.docker.builds) marks.insert(b.build_args.at(labels::kBuildStageArg));
    CHECK(h.docker.builds.size() == 4);  // the shared stage, then a, b, c
    CHECK(marks.size() == 4);
  }
  Host k;  // a host that keeps them (--keep-stages)
  auto cells = three_cells(k);
  k.build(cells, true);
  CHECK(k.docker.list_images({.labels = {labels::kBuildStage}, .dangling = true}).size() == 3);
  CHECK(k.docker.inspect("imgtool-stage/" + cells[0].stage_key + ":build"));
  auto items = prune_engine(k.docker, false).removed;
  CHECK(whats(items, PruneKind::dangling_image).size() == 3);  // the stage image stays: a and b need it
  CHECK(k.docker.list_images({.labels = {labels::kBuildStage}, .dangling = true}).empty());
  CHECK(k.docker.inspect("imgtool-stage/" + cells[0].stage_key + ":build"));
}
