// verify_image (verify_image.h), the one call behind `imgtool verify`, on an oci: layout written from
// crafted layers and the fake engine (engine/fake_engine.h) for the smoke: the parts run in order
// (claims, then smoke), a failed signature stops the smoke, and a bad request is refused.
#include "verify/verify_image.h"

#include <doctest/doctest.h>

#include "core/error.h"
#include "engine/fake_engine.h"
#include "image/copy.h"
#include "image/oci_layout.h"
#include "scan/testing/layers.h"
#include "sign/keys.h"
#include "tests/fixtures.h"
#include "verify/report_render.h"

using namespace imgtool;
using namespace imgtool::verify;
using namespace imgtool::scan::testing;

namespace {

MemorySource cpu_image() {
  return MemorySource(
      config_with({{"io.imgtool.paddle", "3.2.0"}, {"io.imgtool.python", "3.11"}, {"io.imgtool.variant", "cpu"}}),
      {make_tar(python_paddle_layer("3.11", "paddlepaddle", "3.2.0", "False"), "gzip")});
}

const nlohmann::json kPass = {
    {"environment", {{"status", "ok"}, {"reason", "debian 12"}}},
    {"paddle", {{"status", "ok"}, {"reason", "paddle 3.2.0 works on CPU"}}},
    {"metrics", nlohmann::json::array()},
    {"verdict", {{"status", "pass"}, {"reasons", nlohmann::json::array()}, {"warnings", nlohmann::json::array()}}}};

std::vector<std::string> ids(const Report& r) {
  std::vector<std::string> out;
  for (const auto& c : r.checks) out.push_back(c.id);
  return out;
}

size_t index_of(const std::vector<std::string>& v, const std::string& prefix) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].rfind(prefix, 0) == 0) return i;
  return v.size();
}

}  // namespace

TEST_CASE("verify_image: claims, then the smoke, in one report; a failed signature runs nothing") {
  imgtool::testing::ScratchDir d("verify-image");
  MemorySource src = cpu_image();
  image::OciDestination dst(d.path / "layout");
  image::copy_image(src, dst, "3.2.0-cpu");
  engine::FakeEngine docker;
  docker.add_image({"x:cpu"}, {.id = src.manifest().config().digest, .labels = {{"io.imgtool.variant", "cpu"}}});
  docker.on_run = [](const engine::RunRequest&) { return RunResult{0, false, kPass.dump(), ""}; };
  VerifyRequest req{.ref = "oci:" + (d.path / "layout").string() + ":3.2.0-cpu", .signature = false, .kb = &test_kb()};
  req.smoke_options.engine = &docker;
  req.smoke_options.records.record = false;
  req.smoke_options.smoke.probe_dir = "/nonexistent-probe";

  Report r = verify_image(req);
  CHECK_MESSAGE(r.ok(), render_table(r));
  auto rows = ids(r);
  REQUIRE(index_of(rows, "claims") < rows.size());
  REQUIRE(index_of(rows, "smoke") < rows.size());
  CHECK(index_of(rows, "claims") < index_of(rows, "smoke"));
  CHECK(docker.called("run "));

  SUBCASE("--no-smoke: no run") {
    engine::FakeEngine quiet;
    req.smoke = false;
    req.smoke_options.engine = &quiet;
    CHECK(verify_image(req).ok());
    CHECK_FALSE(quiet.called("run "));
  }
  SUBCASE("a signature that fails (an oci: layout holds none): claims not scanned, smoke not run") {
    engine::FakeEngine quiet;
    quiet.add_image({"x:cpu"}, {.id = src.manifest().config().digest});
    req.smoke_options.engine = &quiet;
    sign::Pkey key = sign::generate_key();
    req.signature = true;
    req.public_key = key.get();
    Report signed_check = verify_image(req);
    CHECK_FALSE(signed_check.ok());
    CHECK_FALSE(quiet.called("run "));
  }
  SUBCASE("bad requests are refused before anything is read") {
    req.signature = true;  // and no key
    CHECK_THROWS_WITH_AS(verify_image(req), doctest::Contains("--key"), InputError);
    req.signature = false;
    req.kb = nullptr;
    CHECK_THROWS_AS(verify_image(req), InputError);
    req.kb = &test_kb();
    req.ref = "nonsense::";
    CHECK_THROWS_AS(verify_image(req), InputError);
  }
}
