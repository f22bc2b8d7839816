// pin_bases on the engine double: each tag-only base is asked for once and pinned by its registry
// digest (pulled) or its image ID (made here); the generated Dockerfile then names the pin, and the
// inputs hash moves with it.
#include "builder/base_pin.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>

#include "core/error.h"
#include "core/fs.h"
#include "dockerfiles/cell_values.h"
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
                                              "nvidia/cuda@sha256:short\nRUN evil", "nvidia/cuda@" + registry_digest}});
  matrix::Plan plan;
  plan.kept = {cell("a", kLocal), cell("b", kLocal), cell("c", kPulled), cell("d", "imgtool-base/absent:1"),
               dockerfiles::testing::gpu_cell()};  // the last one the matrix pinned itself
  auto lines = pin_bases(plan, fake);

  auto pulled = *fake.find(kPulled);
  CHECK(plan.kept[0].base_id == local.id);
  CHECK(plan.kept[0].base_from == local.id);  // FROM sha256:<id>
  CHECK(plan.kept[0].base_digest.empty());
  CHECK(plan.kept[0].warnings == std::vector<std::string>{"another"});  // tag-only is no longer true
  CHECK(plan.kept[1].base_from == local.id);
  CHECK(plan.kept[2].base_id == pulled.id);
  CHECK(plan.kept[2].base_from == kPulled + "@" + registry_digest);  // the repository's own digest, not another's
  CHECK(plan.kept[2].base_digest.empty());                           // the matrix's field: untouched
  CHECK(plan.kept[3].base_id.empty());
  CHECK(plan.kept[3].base_from.empty());
  CHECK(plan.kept[3].warnings.size() == 2);
  CHECK(plan.kept[4].base_digest == "sha256:" + std::string(64, 'a'));
  CHECK(plan.kept[4].base_id.empty());
  CHECK(std::count(fake.calls.begin(), fake.calls.end(), "inspect " + kLocal) == 1);  // once per base
  CHECK_FALSE(fake.called("inspect nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04"));
  CHECK(lines.size() == 2);
  CHECK(has(lines, "base " + kLocal + ": image ID " + local.id + " (made here, no registry digest)"));
  CHECK(has(lines, "base " + kPulled + ": registry digest " + registry_digest + " (image ID " + pulled.id + ")"));

  SUBCASE("an engine that does not answer pins nothing and stops nothing") {
    engine::FakeEngine down;
    down.unreachable = true;
    matrix::Plan p;
    p.kept = {cell("a", kLocal)};
    auto l = pin_bases(p, down);
    CHECK(p.kept[0].base_id.empty());
    CHECK(p.kept[0].base_from.empty());
    CHECK(has(l, "base " + kLocal + ": not pinned, the engine did not answer: "));
  }
  SUBCASE("under BuildKit FROM keeps a base made here by tag, and the line says why; its ID is still known") {
    engine::FakeEngine bk;
    bk.kind = "buildkit";
    auto img = bk.add_image({kLocal});
    matrix::Plan p;
    p.kept = {cell("a", kLocal)};
    auto l = pin_bases(p, bk);
    CHECK(p.kept[0].base_id == img.id);
    CHECK(p.kept[0].base_from.empty());
    CHECK(p.kept[0].warnings.size() == 2);
    CHECK(has(l, "FROM keeps the tag: BuildKit cannot build FROM an image ID (moby/buildkit#2204)"));
  }
}

TEST_CASE("pin_bases: a base the engine lacks is pinned by the digest a registry gives its tag, asked once") {
  engine::FakeEngine fake;  // the engine double: it holds neither base
  const std::string d = "sha256:" + std::string(64, 'f');
  std::vector<std::string> asked;
  builder::RegistryDigest registry = [&](const std::string& image) -> std::string {  // the registry double
    asked.push_back(image);
    if (image == kPulled) return d;
    if (image == "nvidia/cuda:no-such-tag") throw Error("registry-1.docker.io: MANIFEST_UNKNOWN (404)");
    return "sha256:short";
  };
  matrix::Plan plan;
  plan.kept = {cell("a", kPulled), cell("b", kPulled), cell("c", "nvidia/cuda:no-such-tag"), cell("d", "odd/answer:1")};
  auto lines = pin_bases(plan, fake, registry);
  CHECK(asked == std::vector<std::string>{kPulled, "nvidia/cuda:no-such-tag", "odd/answer:1"});  // once per base
  CHECK(plan.kept[0].base_from == kPulled + "@" + d);
  CHECK(plan.kept[0].base_id.empty());  // no image here to name
  CHECK(plan.kept[0].warnings == std::vector<std::string>{"another"});
  CHECK(plan.kept[1].base_from == kPulled + "@" + d);
  CHECK(dockerfiles::base_ref_digest(plan.kept[0]) == d);
  for (size_t i : {2, 3}) {  // the build pulls the tag, as before, and the warning stays
    CHECK(plan.kept[i].base_from.empty());
    CHECK(plan.kept[i].warnings.size() == 2);
  }
  CHECK(has(lines, "base " + kPulled + ": registry digest " + d + " (asked the registry: the engine lacks it"));
  CHECK(has(lines,
            "base nvidia/cuda:no-such-tag: not pinned, the engine lacks it and the registry did not answer: "
            "registry-1.docker.io: MANIFEST_UNKNOWN (404)"));
  CHECK(has(lines, "base odd/answer:1: not pinned, the registry's answer is no sha256:<64 hex> digest"));
  CHECK_FALSE(has(lines, "sha256:short"));  // a registry's text is not echoed

  SUBCASE("without a registry to ask, nothing is asked and nothing pinned") {
    matrix::Plan p;
    p.kept = {cell("a", kPulled)};
    CHECK(pin_bases(p, fake).empty());
    CHECK(p.kept[0].base_from.empty());
  }
  SUBCASE("the pinned digest is FROM's and the base.digest label's, and stays out of the inputs hash") {
    fs::path out = fs::temp_directory_path() / ("imgtool-base-pin-reg-" + std::to_string(::getpid()));
    matrix::Cell plain = cell("a", kPulled);
    auto g = dockerfiles::generate_each({plan.kept[0]}, {.out_dir = out / "pinned", .kb_version = "t"});
    auto h = dockerfiles::generate_each({plain}, {.out_dir = out / "plain", .kb_version = "t"});
    REQUIRE(g.generated.size() == 1);
    REQUIRE(h.generated.size() == 1);
    std::string df = read_file(g.generated[0].dir / "Dockerfile");
    CHECK(df.find("FROM " + kPulled + "@" + d) != std::string::npos);
    CHECK(df.find("org.opencontainers.image.base.digest=\"" + d + "\"") != std::string::npos);
    CHECK(read_file(h.generated[0].dir / "Dockerfile").find("org.opencontainers.image.base.digest") ==
          std::string::npos);
    CHECK(g.generated[0].inputs_hash == h.generated[0].inputs_hash);
    fs::remove_all(out);
  }
}

TEST_CASE("a pinned base is in the Dockerfile's FROM lines and its label, not in the inputs hash") {
  fs::path out = fs::temp_directory_path() / ("imgtool-base-pin-" + std::to_string(::getpid()));
  fs::remove_all(out);
  std::string id_a = "sha256:" + std::string(64, '1'), id_b = "sha256:" + std::string(64, '2');
  // One cell generated three times: on an engine without its base, and on two with other bases.
  auto generated = [&](const std::string& id, const std::string& dir) {
    matrix::Cell c = cell("p", kLocal);
    c.base_id = c.base_from = id;
    auto gen = dockerfiles::generate_each({c}, {.out_dir = out / dir, .kb_version = "test"});
    REQUIRE(gen.generated.size() == 1);
    return gen.generated[0];
  };
  auto tag_only = generated("", "t"), pin_a = generated(id_a, "a"), pin_b = generated(id_b, "b");
  std::string df = read_file(pin_a.dir / "Dockerfile");
  CHECK(df.find("\nFROM " + id_a + " AS build\n") != std::string::npos);
  CHECK(df.find("\nFROM " + id_a + "\n") != std::string::npos);
  CHECK(df.find("io.imgtool.base-id=\"" + id_a + "\"") != std::string::npos);
  CHECK(df.find(kLocal + " AS") == std::string::npos);
  std::string plain = read_file(tag_only.dir / "Dockerfile");
  CHECK(plain.find("\nFROM " + kLocal + " AS build\n") != std::string::npos);
  CHECK(plain.find("io.imgtool.base-id") == std::string::npos);
  // The inputs are the cell's, whichever base the engine holds; the builder compares the label with
  // the engine's base (build_driver.cc). The first stage is built from the pin: another stage.
  CHECK(pin_a.inputs_hash == pin_b.inputs_hash);
  CHECK(pin_a.inputs_hash == tag_only.inputs_hash);
  CHECK(pin_a.file.build.stage_key != pin_b.file.build.stage_key);
  CHECK(read_file(pin_a.dir / "inputs.txt") == read_file(tag_only.dir / "inputs.txt"));
  SUBCASE("a base_from that is neither the ID nor the base's own name at a sha256 digest is bad input") {
    for (std::string from : {"sha256:" + std::string(64, '3'), "other/image@sha256:" + std::string(64, 'a'),
                             kLocal + "@sha256:short\nRUN evil"}) {
      matrix::Cell bad = cell("bad", kLocal);
      bad.base_id = id_a;
      bad.base_from = from;
      auto g = dockerfiles::generate_each({bad}, {.out_dir = out / "bad-from", .kb_version = "test"});
      REQUIRE(g.failed.size() == 1);
      CHECK_MESSAGE(g.failed[0].reason.find("base_from") != std::string::npos, g.failed[0].reason);
    }
  }
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
