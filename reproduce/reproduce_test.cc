// reproduce() with the engine double (engine/fake_engine.h, named FakeEngine: no Docker here) and
// images in OCI layouts: what is refused before any build (no labels, no such cell, another KB,
// other inputs, a failed rebuild), one --no-cache rebuild for the images of one cell, the rebuild
// removed, and a difference named. The reproduced path runs on the real engine
// (reproduce_integration_test).
#include "reproduce/reproduce.h"

#include <doctest/doctest.h>

#include "builder/testing/cell_folder.h"
#include "engine/fake_engine.h"
#include "image/copy.h"
#include "matrix/labels.h"
#include "matrix/testing/cells.h"
#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::testing;

namespace {

struct World {
  ScratchDir d{"reproduce-unit"};
  engine::FakeEngine fake;
  builder::GeneratedCell cell;
  int images = 0;

  World() {
    cell = builder::testing::write_cell(d.path / "gen" / "3.2.0", {.cell = matrix::testing::cell("3.2.0")});
    fs::create_directories(d.path / "work");
  }
  std::map<std::string, std::string> labels() const {
    return {{labels::kTag, "3.2.0"},
            {labels::kInputsHash, cell.inputs_hash},
            {labels::kKbVersion, cell.kb_version},
            {labels::kSourceDateEpoch, "1767225600"}};
  }
  // An image with these labels in an OCI layout of its own: its reference.
  std::string published(const std::map<std::string, std::string>& l) {
    std::string name = "pub:" + std::to_string(++images);
    fake.add_image({name}, {.labels = l});
    auto src = fake.save(name);
    std::string ref = "oci:" + (d.path / ("layout" + std::to_string(images))).string() + ":p";
    auto dst = image::open_destination(image::parse_reference(ref));
    image::copy_image(*src, *dst, "p");
    return ref;
  }
  reproduce::ReproduceReport run(const std::vector<std::string>& refs) {
    return reproduce::reproduce(
        {.refs = refs, .cells = {cell}, .kb_version = cell.kb_version, .engine = &fake, .work_dir = d.path / "work"});
  }
  size_t builds() const { return fake.builds.size(); }
};

}  // namespace

TEST_CASE("reproduce: what cannot be rebuilt is said, and nothing is built for it") {
  World w;
  auto l = w.labels();
  auto no_epoch = l, other_kb = l, other_inputs = l, other_cell = l;
  no_epoch.erase(labels::kSourceDateEpoch);
  other_kb[labels::kKbVersion] = "another";
  other_inputs[labels::kInputsHash] = "sha256:" + std::string(64, 'f');
  other_cell[labels::kTag] = "9.9.9";
  auto r = w.run({w.published({}), w.published(no_epoch), w.published(other_kb), w.published(other_inputs),
                  w.published(other_cell), "oci:" + (w.d.path / "none").string() + ":p"});
  REQUIRE(r.images.size() == 6);
  for (const auto& i : r.images) CHECK(i.outcome == reproduce::Outcome::not_rebuilt);
  CHECK(r.images[0].why == "no io.imgtool.tag label: not an image imgtool built");
  CHECK(r.images[1].why.rfind("no io.imgtool.source-date-epoch label (a number)", 0) == 0);
  CHECK(r.images[2].why.rfind("the image was made with KB another, the matrix is planned with KB t", 0) == 0);
  CHECK(r.images[3].why.rfind("the cell's inputs changed since the image was built: it carries sha256:fff", 0) == 0);
  CHECK(r.images[4].why.rfind("the matrix has no cell 9.9.9", 0) == 0);
  CHECK(r.images[5].why.rfind("the image cannot be read: ", 0) == 0);
  CHECK(w.builds() == 0);
  CHECK_FALSE(r.ok());
  CHECK(reproduce::render(r).find("not rebuilt: " + r.images[0].ref + ": no io.imgtool.tag label") !=
        std::string::npos);
}

TEST_CASE("reproduce: an image built on another base than the engine's is not rebuilt, and says which") {
  World w;
  std::string here = "sha256:" + std::string(64, '1'), then = "sha256:" + std::string(64, '2');
  w.cell.cell.base_id = here;  // as pin_bases sets it when the engine holds the base
  auto same = w.labels(), other = w.labels(), unlabelled = w.labels();
  same[labels::kBaseId] = here;
  other[labels::kBaseId] = then;
  auto r = w.run({w.published(other)});
  REQUIRE(r.images.size() == 1);
  CHECK(r.images[0].outcome == reproduce::Outcome::not_rebuilt);
  CHECK(r.images[0].why == "the base changed since the image was built: it was built on " + w.cell.cell.base_image +
                               " = " + then + ", the engine's " + w.cell.cell.base_image + " is " + here + " now");
  CHECK(w.builds() == 0);
  // The same base, or an image from before the label: rebuilt.
  auto r2 = w.run({w.published(same), w.published(unlabelled)});
  CHECK(w.builds() == 1);
  for (const auto& i : r2.images) CHECK(i.why.find("the base changed") == std::string::npos);
}

TEST_CASE("reproduce: the images of one cell share one --no-cache rebuild, which goes; a difference is named") {
  World w;
  std::string a = w.published(w.labels()), b = w.published(w.labels());
  auto r = w.run({a, b});
  REQUIRE(w.builds() == 1);
  CHECK(w.fake.builds[0].no_cache);
  CHECK(w.fake.builds[0].image.rfind("imgtool-reproduce/", 0) == 0);
  CHECK_FALSE(w.fake.inspect(w.fake.builds[0].image));  // removed once normalized
  REQUIRE(r.images.size() == 2);
  for (const auto& i : r.images) {
    // The double's build labels its image as the builder asks, not as the Dockerfile would (no
    // epoch label): its config differs from the published one, and the report says where.
    CHECK(i.outcome == reproduce::Outcome::differs);
    CHECK(i.difference.config_differs);
    CHECK_FALSE(i.rebuilt_digest.empty());
    CHECK(i.rebuilt_digest != i.normalized_digest);
    CHECK(i.epoch == 1767225600);
  }
  CHECK(reproduce::render(r).find("differs: " + a + " (cell 3.2.0; the image, then the rebuild") != std::string::npos);
  CHECK(fs::is_empty(w.d.path / "work" / "logs") == false);  // the rebuild's log
  CHECK_FALSE(fs::exists(w.d.path / "work" / "rebuilt-0"));  // its normalized copy went
}

TEST_CASE("reproduce: a failed rebuild is the images' reason") {
  World w;
  std::string a = w.published(w.labels());
  w.fake.build_script["imgtool-reproduce/" + std::to_string(::getpid()) + "/" + w.cell.cell.repository + ":3.2.0"] = {
      "The command '/bin/sh -c false' returned a non-zero code: 1"};
  auto r = w.run({a});
  REQUIRE(r.images.size() == 1);
  CHECK(r.images[0].outcome == reproduce::Outcome::not_rebuilt);
  CHECK(r.images[0].why.rfind("the rebuild failed: ", 0) == 0);
}
