// pin_bases on the engine double: each tag-only base is asked for once and pinned by its registry
// digest (pulled) or its image ID (made here); the generated Dockerfile then names the pin, and the
// inputs hash moves with it.
#include "builder/base_pin.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>

#include "core/fs.h"
#include "dockerfiles/generate.h"
#include "dockerfiles/test_cells.h"
#include "engine/fake_engine.h"

using namespace imgtool;
using imgtool::builder::pin_bases;

namespace {

matrix::Cell cell(const std::string& tag, const std::string& base) {
  matrix::Cell c = dockerfiles::testing::gpu_cell();
  c.tag = tag;
  c.base_image = base;
  c.base_digest.clear();
  c.warnings = {"base image " + base + " is tag-only (no digest pin): builds are not reproducible", "another"};
  return c;
}

bool has(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

const std::string kLocal = "imgtool-base/cuda:12.6-wheels", kPulled = "nvidia/cuda:12.6.3-runtime-ubuntu22.04";

}  // namespace

TEST_CASE("pin_bases: a base made here by its image ID, a pulled one by its registry digest, an absent one by tag") {
  engine::FakeEngine fake;  // the engine double
  auto local = fake.add_image({kLocal});
  std::string registry_digest = "sha256:" + std::string(64, 'd');
  fake.add_image({kPulled}, {.repo_digests = {"docker.io/nvidia/other@sha256:" + std::string(64, 'e'),
                                              "nvidia/cuda@" + registry_digest}});
  matrix::Plan plan;
  plan.kept = {cell("a", kLocal), cell("b", kLocal), cell("c", kPulled), cell("d", "imgtool-base/absent:1"),
               dockerfiles::testing::gpu_cell()};  // the last one the matrix pinned itself
  auto lines = pin_bases(plan, fake);

  CHECK(plan.kept[0].base_id == local.id);
  CHECK(plan.kept[0].base_digest.empty());
  CHECK(plan.kept[0].warnings == std::vector<std::string>{"another"});  // tag-only is no longer true
  CHECK(plan.kept[1].base_id == local.id);
  CHECK(plan.kept[2].base_digest == registry_digest);  // the repository's own digest, not another's
  CHECK(plan.kept[2].base_id.empty());
  CHECK(plan.kept[3].base_id.empty());
  CHECK(plan.kept[3].base_digest.empty());
  CHECK(plan.kept[3].warnings.size() == 2);
  CHECK(plan.kept[4].base_digest == "sha256:" + std::string(64, 'a'));
  CHECK(std::count(fake.calls.begin(), fake.calls.end(), "inspect " + kLocal) == 1);  // once per base
  CHECK_FALSE(fake.called("inspect nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04"));
  CHECK(lines.size() == 2);
  CHECK(has(lines, "base " + kLocal + ": image ID " + local.id + " (made here, no registry digest)"));
  CHECK(has(lines, "base " + kPulled + ": registry digest " + registry_digest));

  SUBCASE("an engine that does not answer pins nothing and stops nothing") {
    engine::FakeEngine down;
    down.unreachable = true;
    matrix::Plan p;
    p.kept = {cell("a", kLocal)};
    auto l = pin_bases(p, down);
    CHECK(p.kept[0].base_id.empty());
    CHECK(has(l, "base " + kLocal + ": not pinned, the engine did not answer: "));
  }
  SUBCASE("under BuildKit a base made here stays by tag, and the line says why") {
    engine::FakeEngine bk;
    bk.kind = "buildkit";
    bk.add_image({kLocal});
    matrix::Plan p;
    p.kept = {cell("a", kLocal)};
    auto l = pin_bases(p, bk);
    CHECK(p.kept[0].base_id.empty());
    CHECK(p.kept[0].warnings.size() == 2);
    CHECK(has(l, "left by tag: BuildKit cannot build FROM an image ID (moby/buildkit#2204)"));
  }
}

TEST_CASE("a pinned base is in the Dockerfile's FROM lines, its label and the inputs hash") {
  fs::path out = fs::temp_directory_path() / ("imgtool-base-pin-" + std::to_string(::getpid()));
  fs::remove_all(out);
  std::string id_a = "sha256:" + std::string(64, '1'), id_b = "sha256:" + std::string(64, '2');
  matrix::Cell tag_only = cell("t", kLocal), pin_a = cell("pa", kLocal), pin_b = cell("pb", kLocal);
  pin_a.base_id = id_a;
  pin_b.base_id = id_b;
  auto gen = dockerfiles::generate_each({tag_only, pin_a, pin_b}, {.out_dir = out, .kb_version = "test"});
  REQUIRE(gen.generated.size() == 3);
  auto by_tag = [&](const std::string& t) {
    return *std::find_if(gen.generated.begin(), gen.generated.end(), [&](auto& g) { return g.tag == t; });
  };
  std::string df = read_file(by_tag("pa").dir / "Dockerfile");
  CHECK(df.find("\nFROM " + id_a + " AS build\n") != std::string::npos);
  CHECK(df.find("\nFROM " + id_a + "\n") != std::string::npos);
  CHECK(df.find("io.imgtool.base-id=\"" + id_a + "\"") != std::string::npos);
  CHECK(df.find(kLocal + " AS") == std::string::npos);
  CHECK(read_file(by_tag("t").dir / "Dockerfile").find("\nFROM " + kLocal + " AS build\n") != std::string::npos);
  // Another ID is another input (the base was made again); and the shared first stage differs too.
  CHECK(by_tag("pa").inputs_hash != by_tag("pb").inputs_hash);
  CHECK(by_tag("pa").inputs_hash != by_tag("t").inputs_hash);
  CHECK(by_tag("pa").file.build.stage_key != by_tag("pb").file.build.stage_key);
  SUBCASE("a base_id that is no image ID is bad input") {
    matrix::Cell bad = cell("bad", kLocal);
    bad.base_id = "latest";
    auto g = dockerfiles::generate_each({bad}, {.out_dir = out / "bad", .kb_version = "test"});
    REQUIRE(g.failed.size() == 1);
    CHECK_MESSAGE(g.failed[0].reason.find("base_id 'latest': expected sha256:<64 hex>") != std::string::npos,
                  g.failed[0].reason);
  }
  fs::remove_all(out);
}
