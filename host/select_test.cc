#include "host/select.h"

#include <doctest/doctest.h>

#include "core/error.h"
#include "host/registry_candidates.h"
#include "matrix/matrix.h"
#include "tests/source_kb.h"
#include "tests/test_dirs.h"

using namespace imgtool;
using namespace imgtool::host;

namespace {
const matrix::KnowledgeBase& kb() { return imgtool::testing::source_kb(); }
std::vector<matrix::Cell> cells() {
  static auto p = matrix::plan_matrix(imgtool::testing::source_dir() + "/matrix/paddle.yaml", kb(), {"2026-11-22"});
  return p.kept;
}
const PassedOver* passed(const SelectResult& r, const std::string& tag) {
  for (auto& p : r.passed_over)
    if (p.tag == tag) return &p;
  return nullptr;
}
}  // namespace

TEST_CASE("select: a V100 with 470.82.01 gets the newest CUDA 11.8 tag; the 12.x ones are passed over with the rule") {
  auto r = select_tag(cells(), {}, kb(), {"470.82.01", "Tesla V100-SXM2-32GB", "given by hand"});
  REQUIRE(r.chosen);
  CHECK(r.chosen->tag == "3.3.1-gpu-cuda11.8-cudnn8.9");
  CHECK(r.why[0].find("470.82.01 >= 450.80.02 (NVIDIA's minor-version compatibility floor") != std::string::npos);
  CHECK(r.why[1].find("Volta (compute capability 7.0) is served by CUDA 9.0 to 12.9") != std::string::npos);
  CHECK(r.why[2].find("minor-version compatibility") != std::string::npos);
  auto* p = passed(r, "3.3.1-gpu-cuda12.6-cudnn9.5");
  REQUIRE(p);
  CHECK(p->rule == "host-driver");
  CHECK(p->why.find("decided by Paddle's documented floor") != std::string::npos);
  CHECK_FALSE(passed(r, "2.6.2-gpu-cuda11.2-cudnn8.2-trt8.0"));  // older: not better-looking
}

TEST_CASE("select: an H100 with 550.54.15 gets the newest Paddle on the newest CUDA it can run") {
  auto r = select_tag(cells(), {}, kb(), {"550.54.15", "NVIDIA H100 80GB HBM3", "given by hand"});
  REQUIRE(r.chosen);
  CHECK(r.chosen->paddle == "3.3.1");
  CHECK(r.chosen->cuda == "12.6");  // 3.3's CUDA 12.9 build: Paddle's floor 575.51.03 (UNCONFIRMED) passes it over
  auto* p129 = passed(r, "3.3.1-gpu-cuda12.9-cudnn9.9");
  REQUIRE(p129);
  CHECK(p129->rule == "host-driver");
  CHECK(r.host.find("NVIDIA H100 80GB HBM3 (compute capability 9.0)") == 0);
}

// Issue 24 section 3: PyPI's paddlepaddle-gpu 2.6.2 holds sm_61..sm_86 only (kb derive read it).
TEST_CASE("select --gpu on a GPU outside the build's compiled architectures refuses with the reason") {
  auto local =
      matrix::plan_matrix(imgtool::testing::source_dir() + "/matrix/local-gpu.yaml", kb(), {"2026-11-22"}).kept;
  REQUIRE(local.at(0).cuda_archs == "sm_61,sm_70,sm_75,sm_80,sm_86");
  auto h100 = select_tag(local, {}, kb(), {"580.95.05", "NVIDIA H100 80GB HBM3", "given by hand"});
  CHECK_FALSE(h100.chosen);
  auto* p = passed(h100, "2.6.2-gpu-cuda11.8-cudnn8.6");
  REQUIRE(p);
  CHECK(p->rule == "host-kernels");
  CHECK(p->why.find(
            "its GPU code is sm_61,sm_70,sm_75,sm_80,sm_86 (machine code only, no PTX to JIT-compile): nothing runs on "
            "compute capability 9.0 (\"no kernel image is available for execution on the device\")") !=
        std::string::npos);
  auto rtx50 = select_tag(local, {}, kb(), {"580.95.05", "NVIDIA GeForce RTX 5080", "given by hand"});
  CHECK_FALSE(rtx50.chosen);
  auto a100 = select_tag(local, {}, kb(), {"580.95.05", "NVIDIA A100-SXM4-80GB", "given by hand"});
  REQUIRE(a100.chosen);
  CHECK(a100.chosen->tag == "2.6.2-gpu-cuda11.8-cudnn8.6");
  CHECK(
      select_tag(local, {}, kb(), {"580.95.05", "NVIDIA L40S", "given by hand"}).chosen);  // Ada: the sm_86 cubins run
}

TEST_CASE("select: no NVIDIA driver -> the best cpu tag; gpu tags passed over; refused tags listed") {
  auto r = select_tag(cells(), {{"evil", "signature", "not selectable: no signature"}}, kb(), {"", "", "this host"});
  REQUIRE(r.chosen);
  CHECK(r.chosen->variant == "cpu");
  CHECK(r.chosen->paddle == "3.3.1");
  CHECK(r.host.find("no NVIDIA driver") == 0);
  CHECK(r.passed_over.front().tag == "evil");
  CHECK(passed(r, "3.3.1-gpu-cuda12.6-cudnn9.5")->rule == "host-no-gpu");
  CHECK(render_text(r).find("best tag: " + r.chosen->tag) != std::string::npos);
  CHECK(to_json(r)["tag"] == r.chosen->tag);
}

TEST_CASE("select: bad host input") {
  CHECK_THROWS_AS(select_tag(cells(), {}, kb(), {"55x", "H100", ""}), InputError);
  CHECK_THROWS_WITH_AS(select_tag(cells(), {}, kb(), {"550.54.15", "NVIDIA Voodoo", ""}),
                       doctest::Contains("expected a GPU listed"), InputError);
  CHECK_THROWS_AS(select_tag(cells(), {}, kb(), {"550.54.15", "", ""}), InputError);
}

TEST_CASE("cell_from_labels: what select reads back from a registry tag") {
  auto c = cell_from_labels("t",
                            {{"io.imgtool.variant", "gpu"},
                             {"io.imgtool.paddle", "3.2.0"},
                             {"io.imgtool.cuda", "12.6"},
                             {"io.imgtool.min-driver", "525.60.13"}},
                            kb());
  CHECK(c.min_driver_full == "560.28.03");
  auto r = select_tag({c}, {}, kb(), {"535.104.05", "A100", ""});
  CHECK_FALSE(r.chosen);  // Paddle's 550.54.14 floor for 3.2.0 on CUDA 12.6
  CHECK(r.passed_over.at(0).why.find("550.54.14") != std::string::npos);
}
