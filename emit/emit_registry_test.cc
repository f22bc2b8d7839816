// plan --emit k8s without a report: each gpu cell's digest is resolved from a
// REAL docker-registry on loopback through image/ (one manifest GET per tag),
// and the Job names the image by that digest, never by tag.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/fs.h"
#include "emit/k8s_jobs.h"
#include "emit/plan_emit.h"
#include "image/copy.h"
#include "image/docker_transport.h"
#include "image/memory.h"
#include "matrix/matrix.h"
#include "tests/fixtures.h"
#include "tests/registry_fixture.h"

using namespace imgtool;
namespace fx = imgtool::testing;

TEST_CASE("k8s: digests resolved from the registry; a tag the registry lacks is refused, nothing written") {
  fx::RegistryServer registry{fx::RegistryServer::Mode::kHttp, "emit"};
  auto reg = std::make_shared<image::Registry>(registry.host(), registry.options());
  std::string matrix = fx::source_dir() + "/matrix/paddle.yaml";
  auto plan = matrix::plan_matrix(matrix, matrix::KnowledgeBase::load_default());
  std::map<std::string, std::string> pushed;  // tag -> manifest digest
  auto store = std::make_shared<image::MemoryStore>();
  size_t gpu_cells = 0;
  for (auto& c : plan.kept) {
    if (c.variant != "gpu") continue;
    ++gpu_cells;
    auto m = image::random_image(*store, 1, 512 + pushed.size(), c.tag);
    image::MemorySource src(store, c.tag);
    image::DockerDestination dst(reg, "ai/" + c.repository);
    pushed[c.tag] = image::copy_image(src, dst, c.tag).digest;
  }
  REQUIRE(gpu_cells >= 2);  // the default matrix's GPU cells, each pushed under its own tag
  REQUIRE(pushed.size() == gpu_cells);
  fx::ScratchDir d("emit-k8s-registry");
  emit::emit_plan({.input = matrix,
                   .emit = emit::Emit::k8s,
                   .out = d.path / "k8s",
                   .registry = registry.host() + "/ai",
                   .nonce = "0123456789ab"});
  for (auto& [tag, digest] : pushed) {
    auto job = YAML::LoadFile(
        (d.path / "k8s" / ("job-" + emit::smoke_job_name(tag, digest, "0123456789ab") + ".yaml")).string());
    CHECK(job["spec"]["template"]["spec"]["containers"][0]["image"].as<std::string>() ==
          registry.host() + "/ai/paddle@" + digest);
    CHECK(job["metadata"]["annotations"]["io.imgtool.digest"].as<std::string>() == digest);
  }
  // Another namespace holds none of them: refused with the cell named, nothing written.
  try {
    emit::emit_plan(
        {.input = matrix, .emit = emit::Emit::k8s, .out = d.path / "none", .registry = registry.host() + "/other"});
    FAIL("expected a refusal");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("has no digest") != std::string::npos);
    CHECK(std::string(e.what()).find(registry.host() + "/other/paddle:") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(d.path / "none"));
}
