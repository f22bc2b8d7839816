#include "host/select.h"

#include <doctest/doctest.h>

#include <fstream>
#include <optional>

#include "core/error.h"
#include "core/fs.h"
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
// The default matrix's GPU cells have no recorded GPU code yet: the tests of the other rules allow that.
const SelectPolicy kAllowUnknown{.allow_unknown_archs = true};
const PassedOver* passed(const SelectResult& r, const std::string& tag) {
  for (auto& p : r.passed_over)
    if (p.tag == tag) return &p;
  return nullptr;
}
}  // namespace

TEST_CASE("select: a V100 with 470.82.01 gets the newest CUDA 11.8 tag; the 12.x ones are passed over with the rule") {
  auto r = select_tag(cells(), {}, kb(), {"470.82.01", "Tesla V100-SXM2-32GB", "given by hand"}, kAllowUnknown);
  REQUIRE(r.chosen);
  CHECK(r.chosen->tag == "3.3.1-gpu-cuda11.8-cudnn8.9");
  CHECK(r.why[0].find("470.82.01 >= 450.80.02 (NVIDIA's minor-version compatibility floor") != std::string::npos);
  CHECK(r.why[1].find("Volta (compute capability 7.0) is served by CUDA 9.0 to 12.9") != std::string::npos);
  CHECK(r.why[2].find("kernels: GPU code UNKNOWN") == 0);
  CHECK(r.why[2].find("accepted by --allow-unknown-archs") != std::string::npos);
  CHECK(r.why[3] == "platform: linux/amd64, this host's CPU");
  CHECK(r.why[4].find("minor-version compatibility") != std::string::npos);
  auto* p = passed(r, "3.3.1-gpu-cuda12.6-cudnn9.5");
  REQUIRE(p);
  CHECK(p->rule == "host-driver");
  CHECK(p->why.find("decided by Paddle's floor for its CUDA 12.6 builds") != std::string::npos);
  CHECK_FALSE(passed(r, "2.6.2-gpu-cuda11.2-cudnn8.2-trt8.0"));  // older: not better-looking
}

TEST_CASE("select: an H100 with 550.54.15 gets the newest Paddle on the newest CUDA it can run") {
  auto r = select_tag(cells(), {}, kb(), {"550.54.15", "NVIDIA H100 80GB HBM3", "given by hand"}, kAllowUnknown);
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
  auto r = select_tag({c}, {}, kb(), {"535.104.05", "A100", ""}, kAllowUnknown);
  CHECK_FALSE(r.chosen);  // Paddle's 550.54.14 floor for 3.2.0 on CUDA 12.6
  CHECK(r.passed_over.at(0).why.find("550.54.14") != std::string::npos);
}

// Issue 32 section 3: the hosts users ask about, each answer with its reason.
TEST_CASE("select: a GPU tag with unknown GPU code is never recommended blind; the override says so") {
  auto r = select_tag(cells(), {}, kb(), {"580.95.05", "NVIDIA GeForce RTX 5090", "given by hand"});
  CHECK_FALSE(r.chosen);
  auto* p = passed(r, "3.3.1-gpu-cuda13.0-cudnn9.13");
  REQUIRE(p);
  CHECK(p->rule == "host-kernels");
  CHECK(p->why.find("has no recorded GPU code") != std::string::npos);
  CHECK(p->why.find("RTX 5090 (compute capability 12.0) is unknown") != std::string::npos);
  CHECK(p->why.find("--allow-unknown-archs accepts it") != std::string::npos);
  auto allowed =
      select_tag(cells(), {}, kb(), {"580.95.05", "NVIDIA GeForce RTX 5090", "given by hand"}, kAllowUnknown);
  REQUIRE(allowed.chosen);
  CHECK(std::any_of(allowed.why.begin(), allowed.why.end(),
                    [](auto& w) { return w.find("GPU code UNKNOWN") != std::string::npos; }));
  CHECK(render_text(allowed).find("accepted by --allow-unknown-archs") != std::string::npos);
}

TEST_CASE("select: one driver floor for every cell of a CUDA line (RTX 5090 on 570)") {
  // 3.3's cu129 build names 575.51.03; the 3.1/3.2 cu129 builds name none: the same CUDA 12.9 runtime
  // needs the same driver, so none of them is offered to a 570 driver.
  auto r = select_tag(cells(), {}, kb(), {"570.86.10", "NVIDIA GeForce RTX 5090", "given by hand"}, kAllowUnknown);
  for (const char* tag :
       {"3.3.1-gpu-cuda12.9-cudnn9.9", "3.2.0-gpu-cuda12.9-cudnn9.9", "3.1.0-gpu-cuda12.9-cudnn9.9"}) {
    const PassedOver* p = passed(r, tag);
    if (!p) continue;  // not better-looking than the choice
    CHECK(p->rule == "host-driver");
    CHECK(p->why.find("575.51.03") != std::string::npos);
  }
  if (r.chosen) CHECK(r.chosen->cuda != "12.9");
}

TEST_CASE("select: a B300 (10.3) is not served by sm_100a code; a B200 (10.0) is") {
  matrix::Cell c = cells().front();
  for (auto& x : cells())
    if (x.variant == "gpu" && x.cuda == "13.0") c = x;
  REQUIRE(c.cuda == "13.0");
  c.cuda_archs = "sm_80,sm_90a,sm_100a";
  auto b300 = select_tag({c}, {}, kb(), {"580.95.05", "NVIDIA B300 SXM6 AC", "given by hand"});
  CHECK_FALSE(b300.chosen);
  REQUIRE(b300.passed_over.size() == 1);
  CHECK(b300.passed_over[0].rule == "host-kernels");
  CHECK(b300.passed_over[0].why.find("arch-specific sm_100a runs on its own compute capability only") !=
        std::string::npos);
  auto b200 = select_tag({c}, {}, kb(), {"580.95.05", "NVIDIA B200", "given by hand"});
  REQUIRE(b200.chosen);
  CHECK(b200.why[2] == "kernels: GPU code sm_80,sm_90a,sm_100a runs on compute capability 10.0");
  c.cuda_archs = "sm_80,sm_100f";
  CHECK(select_tag({c}, {}, kb(), {"580.95.05", "NVIDIA B300 SXM6 AC", "given by hand"}).chosen);
}

TEST_CASE("select: a GB200 host (Grace, arm64) is offered no amd64 image; the reason names the CPU") {
  auto r = select_tag(cells(), {}, kb(), {"580.95.05", "NVIDIA GB200", "given by hand"}, kAllowUnknown);
  CHECK_FALSE(r.chosen);
  CHECK(r.host.find("CPU arm64") != std::string::npos);
  auto* p = passed(r, "3.3.1-gpu-cuda13.0-cudnn9.13");
  REQUIRE(p);
  CHECK(p->rule == "host-platform");
  CHECK(p->why ==
        "linux/amd64 image: this host's CPU is arm64 (NVIDIA GB200 comes with an arm64 CPU "
        "(matrix/kb/gpus.yaml host_cpu)), so it does not start (\"exec format error\")");
  // An arm64 build of a tag (its config says so) is offered; a cpu host says its CPU too.
  auto all = cells();
  matrix::Cell c = *std::find_if(all.begin(), all.end(), [](auto& x) { return x.cuda == "13.0"; });
  c.cuda_archs = "sm_100,sm_120";
  auto arm = select_tag({c}, {}, kb(), {"580.95.05", "NVIDIA GB200", "given by hand"},
                        {.platforms = {{c.tag, "linux/arm64"}}});
  REQUIRE(arm.chosen);
  CHECK(arm.why[3] == "platform: linux/arm64, this host's CPU");
  auto cpu_host = select_tag(cells(), {}, kb(), {"", "", "given by hand", "arm64"});
  CHECK_FALSE(cpu_host.chosen);
  CHECK(cpu_host.host.find("CPU arm64") != std::string::npos);
}

// Issue 32 section 3: archs reported for a build (Paddle's run-time check printed them; not read
// from a wheel) are shown beside the refusal, never used to accept.
TEST_CASE("select: reported (UNCONFIRMED) archs are shown with the refusal, and never accept a GPU") {
  // 3.0.0 cu118 without TensorRT (the default matrix skips its -trt cell: rule trt-cuda-major).
  imgtool::PrivateTempDir dir;
  std::string yaml = (dir.path() / "m.yaml").string();
  std::ofstream(yaml) << "repository: t\naxes: {variant: gpu, paddle: \"3.0.0\", cuda: \"11.8\", trt: none, "
                         "python: \"3.11\", os: ubuntu22.04, flavor: runtime}\n";
  auto plan = matrix::plan_matrix(yaml, kb(), {"2026-11-22"});
  std::optional<matrix::Cell> c;
  for (const auto& x : plan.kept)
    if (x.variant == "gpu" && x.paddle == "3.0.0" && x.cuda == "11.8") c = x;
  REQUIRE(c);
  CHECK(c->cuda_archs.empty());
  CHECK(c->cuda_archs_reported == "sm_60,sm_61,sm_70,sm_75,sm_80,sm_86");
  auto h100 = select_tag({*c}, {}, kb(), {"580.95.05", "NVIDIA H100 80GB HBM3", "given by hand"});
  CHECK_FALSE(h100.chosen);
  REQUIRE(h100.passed_over.size() == 1);
  CHECK(h100.passed_over[0].rule == "host-kernels");
  CHECK(h100.passed_over[0].why.find("reported for this build (UNCONFIRMED, not read from a wheel: "
                                     "github.com/PaddlePaddle/Paddle/issues/74088") != std::string::npos);
  CHECK(h100.passed_over[0].why.find("sm_60,sm_61,sm_70,sm_75,sm_80,sm_86, which would not") != std::string::npos);
  auto a100 = select_tag({*c}, {}, kb(), {"580.95.05", "NVIDIA A100-SXM4-80GB", "given by hand"});
  CHECK_FALSE(a100.chosen);  // reported is not read: still refused
  REQUIRE(a100.passed_over.size() == 1);
  CHECK(a100.passed_over[0].why.find("which would run there") != std::string::npos);
}
