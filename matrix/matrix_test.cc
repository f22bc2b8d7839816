#include "matrix/matrix.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "matrix/explain.h"
#include "matrix/host.h"
#include "matrix/matrix_file.h"
#include "matrix/rules.h"
#include "tests/test_dirs.h"

using namespace imgtool::matrix;
using imgtool::Version;
namespace fs = std::filesystem;

namespace {
const std::string kSrc = imgtool::testing::source_dir();
const KnowledgeBase& kb() {
  static KnowledgeBase k = KnowledgeBase::load(kSrc + "/matrix/kb");
  return k;
}
Plan paddle_plan() { return plan_matrix(kSrc + "/matrix/paddle.yaml", kb(), {"2026-11-22"}); }
std::vector<std::string> tags(const Plan& p) {
  std::vector<std::string> t;
  for (auto& c : p.kept) t.push_back(c.tag);
  return t;
}
bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
const Skipped* skipped(const Plan& p, const std::string& paddle, const std::string& cuda) {
  for (auto& s : p.skipped)
    if (s.axes.at("paddle") == paddle && s.axes.count("cuda") && s.axes.at("cuda") == cuda) return &s;
  return nullptr;
}
std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
std::string write(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / ("imgtool-matrix-test-" + name);
  std::ofstream(p) << text;
  return p.string();
}
std::string error_of(const std::string& name, const std::string& text) {
  try {
    plan_matrix(write(name, text), kb(), {"2026-11-22"});
  } catch (const imgtool::InputError& e) {
    return e.what();
  }
  return "";
}
// A plan that may keep nothing (plan_matrix refuses that).
Plan plan_all(const std::string& path, const PlanOptions& o) {
  return plan_spec(read_matrix_file(path, kb()), kb(), o, false);
}
const char* kHeader =
    "axes:\n  variant: gpu\n  paddle: [\"3.1.0\"]\n  cuda: [\"12.6\"]\n  python: [\"3.10\"]\n  os: [ubuntu22.04]\n";
}  // namespace

TEST_CASE("default matrix reproduces the official tag names") {
  auto t = tags(paddle_plan());
  for (auto want :
       {"2.6.2-gpu-cuda11.2-cudnn8.2-trt8.0", "2.6.2-gpu-cuda11.7-cudnn8.4-trt8.4",
        "2.6.2-gpu-cuda12.0-cudnn8.9-trt8.6", "3.0.0-gpu-cuda12.6-cudnn9.5-trt10.5", "3.1.0-gpu-cuda11.8-cudnn8.9",
        "3.1.0-gpu-cuda12.6-cudnn9.5", "3.1.0-gpu-cuda12.9-cudnn9.9", "3.2.0-gpu-cuda12.6-cudnn9.5",
        "3.3.1-gpu-cuda12.9-cudnn9.9", "3.3.1-gpu-cuda13.0-cudnn9.13", "3.1.0", "2.6.2", "3.3.1"})
    CHECK_MESSAGE(has(t, want), want);
  CHECK(!has(t, "2.6.2-gpu-cuda11.8-cudnn8.6-trt8.5"));  // not published (and no TensorRT 8.5 install spec)
  CHECK(!has(t, "3.0.0-gpu-cuda11.8-cudnn8.9-trt8.6"));  // tensorrt==8.6.1.post1 is a CUDA 12 build (trt-cuda-major)
  CHECK(t.size() == 19);
  // Every cell's Python is one its OS packages: 2.6 on Ubuntu 20.04 with 3.8, 3.x on 22.04 with 3.11
  // (3.10 reached its end of life in October 2026).
  for (auto& c : paddle_plan().kept) {
    INFO(c.tag);
    CHECK(c.python == (c.os == "ubuntu20.04" ? "3.8" : "3.11"));
    CHECK(kb().os_python(c.os)->provides(c.python));
  }
}

TEST_CASE("resolved cell: base image, pip source, drivers, sources") {
  auto p = paddle_plan();
  auto it = std::find_if(p.kept.begin(), p.kept.end(), [](auto& c) { return c.tag == "3.1.0-gpu-cuda12.6-cudnn9.5"; });
  REQUIRE(it != p.kept.end());
  CHECK(it->base_image == "ubuntu:22.04");  // the wheel brings its CUDA libraries: the OS base, no second copy
  CHECK(it->cuda_base == "none");
  CHECK(it->cudnn_from == "pip");
  CHECK(it->pip_requirement == "paddlepaddle-gpu==3.1.0");
  CHECK(it->pip_index_url == "https://www.paddlepaddle.org.cn/packages/stable/cu126/");
  CHECK(it->min_driver == "525.60.13");
  CHECK(it->min_driver_paddle == "550.54.14");
  CHECK(effective_min_driver(*it) == "550.54.14");  // the label and NVIDIA_REQUIRE_CUDA take Paddle's floor
  CHECK(it->min_driver_full == "560.28.03");
  CHECK(!it->sources.empty());
  auto c26 =
      std::find_if(p.kept.begin(), p.kept.end(), [](auto& c) { return c.tag == "2.6.2-gpu-cuda11.2-cudnn8.2-trt8.0"; });
  CHECK(c26->pip_requirement == "paddlepaddle-gpu==2.6.2.post112");
  // nvidia/cuda:11.2.2-cudnn8 ships cuDNN 8.1.1.33; Paddle 2.6's cu112 build claims 8.2.1: the
  // runtime image plus NVIDIA's apt package of exactly 8.2.1, and the unversioned links Paddle 2.6 asks for.
  CHECK(c26->base_image == "nvidia/cuda:11.2.2-runtime-ubuntu20.04");
  CHECK(c26->cudnn_from == "apt");
  CHECK(c26->cudnn_package == "libcudnn8=8.2.1.32-1+cuda11.3");
  CHECK(c26->cudnn_full == "8.2.1.32");
  CHECK(std::find(c26->dynload_links.begin(), c26->dynload_links.end(), "libcublas.so=libcublas.so.11") !=
        c26->dynload_links.end());
  CHECK(std::find(c26->dynload_links.begin(), c26->dynload_links.end(), "libcudnn.so=libcudnn.so.8") !=
        c26->dynload_links.end());
  CHECK(std::find(c26->dynload_links.begin(), c26->dynload_links.end(), "libcupti.so=libcupti.so.11.8:optional") !=
        c26->dynload_links.end());
  // Tag-only base and Python 3.10 past EOL (today injected) are warnings.
  auto joined = [](const Cell& c) {
    std::string s;
    for (auto& w : c.warnings) s += w + "\n";
    return s;
  };
  CHECK(joined(*it).find("tag-only") != std::string::npos);
  CHECK(joined(*it).find("are pinned by version, not by hash") != std::string::npos);  // an index cell
  auto py310 = plan_matrix(write("py310.yaml", std::string(kHeader)), kb(), {"2026-11-22"});
  CHECK(joined(py310.kept.at(0)).find("Python 3.10 reached end of life") != std::string::npos);
  auto early = plan_matrix(kSrc + "/matrix/paddle.yaml", kb(), {"2026-01-01"});
  auto early31 = std::find_if(early.kept.begin(), early.kept.end(),
                              [](auto& c) { return c.tag == "3.1.0-gpu-cuda12.6-cudnn9.5"; });
  REQUIRE(early31 != early.kept.end());
  CHECK(joined(*early31).find("end of life") == std::string::npos);
  auto early26 = std::find_if(early.kept.begin(), early.kept.end(), [](auto& c) { return c.paddle == "2.6.2"; });
  CHECK(joined(*early26).find("Python 3.8 reached end of life on 2024-10-07") != std::string::npos);
  // An UNCONFIRMED fact relied on is a warning.
  auto c129 =
      std::find_if(p.kept.begin(), p.kept.end(), [](auto& c) { return c.tag == "3.1.0-gpu-cuda12.9-cudnn9.9"; });
  CHECK(joined(*c129).find("UNCONFIRMED") != std::string::npos);
}

// Issue 24 section 4: every kept cell of the shipped matrix can be built as it claims.
TEST_CASE("the default matrix passes its own gate: every kept cell's claims are satisfiable by its recipe") {
  auto k = kb();
  for (const Cell& c : paddle_plan().kept) {
    INFO(c.tag);
    if (c.variant != "gpu") continue;
    // The claimed cuDNN is what the image gets: the base's, NVIDIA's apt package, or Paddle's pip pin.
    REQUIRE_FALSE(c.cudnn_full.empty());
    CHECK(Version::parse(c.cudnn)->is_prefix_of(*Version::parse(c.cudnn_full)));
    if (c.cudnn_from == "base") CHECK(k.cuda_images(c.cuda)->cudnn_shipped == c.cudnn_full);
    if (c.cudnn_from == "apt") CHECK(c.base_image.find("-cudnn") == std::string::npos);  // one cuDNN: the apt one
    // Nothing installed twice: a wheel that brings its CUDA libraries gets a base with none.
    if (c.pip_cuda_libraries) {
      CHECK(c.cudnn_from == "pip");
      CHECK(c.base_image.rfind("nvidia/cuda", 0) != 0);
      // 3.x dlopens NVRTC (required), nvJPEG and NVTX by their unversioned names: linked to the wheels'
      std::string nvrtc = "libnvrtc.so=" + k.library("nvrtc")->soname(c.cuda.substr(0, c.cuda.find('.')));
      CHECK(has(c.dynload_links, nvrtc));
    } else {
      CHECK_FALSE(c.dynload_links.empty());  // Paddle 2.x dlopens libcublas.so: the template links it
    }
    // A TensorRT wheel is built for the cell's CUDA major.
    if (!c.trt.empty()) {
      const auto* b = k.paddle_release(c.paddle)->build_for(c.cuda, c.paddle);
      CHECK(b->trt_pip.cuda_major == c.cuda.substr(0, c.cuda.find('.')));
    }
  }
}

TEST_CASE("every kept cell's load table resolves from its recipe: the name Paddle dlopens is shipped and linked") {
  Plan p = paddle_plan();
  for (const auto& s : p.skipped) CHECK_MESSAGE(s.rule != "recipe-loads", s.reason);
  auto k = kb();
  for (const Cell& c : p.kept) {
    if (c.variant != "gpu") continue;
    INFO(c.tag);
    const PaddleLoads* loads = k.paddle_loads(c.paddle, c.pip_cuda_libraries);
    REQUIRE(loads);
    for (const auto& l : loads->libs) {
      std::string so = cell_soname(c, *k.library(l.lib));
      if (so.empty() || !dlopens_unversioned(*loads, l.lib)) continue;
      std::string link = k.library(l.lib)->unversioned() + "=" + so + (l.need == "required" ? "" : ":optional");
      if (so.rfind(k.library(l.lib)->unversioned() + ".", 0) != 0) {  // CUDA 13's NVTX 3: no libnvToolsExt to link
        CHECK_FALSE(has(c.dynload_links, link));
        CHECK(l.need == "feature");
        continue;
      }
      CHECK_MESSAGE(has(c.dynload_links, link), link);
    }
  }
}

TEST_CASE("recipe-loads refuses a cell whose recipe cannot give Paddle a library under the name it asks for") {
  // A 3.x pip build whose KB load table says NVRTC comes from no nvidia-* requirement: refused at plan time.
  std::string libs = read_text(kSrc + "/matrix/kb/libraries.yaml");
  std::string from =
      "pip_provides: [cudart, cublas, cublasLt, cudnn, cufft, curand, cusolver, cusparse, cusparseLt, nccl, nvtx, "
      "nvrtc, cupti]";
  REQUIRE(libs.find(from) != std::string::npos);
  fs::path dir = fs::temp_directory_path() / "imgtool-matrix-test-kb-loads";
  fs::remove_all(dir);
  fs::copy(kSrc + "/matrix/kb", dir, fs::copy_options::recursive);
  libs.replace(libs.find(from), from.size(),
               "pip_provides: [cudart, cublas, cublasLt, cudnn, cufft, curand, cusolver, cusparse, cusparseLt, nccl, "
               "nvtx, cupti]");
  std::ofstream(dir / "libraries.yaml") << libs;
  KnowledgeBase no_nvrtc = KnowledgeBase::load(dir.string());
  Plan p = plan_spec(read_matrix_file(kSrc + "/matrix/paddle.yaml", no_nvrtc), no_nvrtc, {"2026-11-22"}, false);
  const Skipped* s = skipped(p, "3.3.1", "12.6");
  REQUIRE(s);
  CHECK(s->rule == "recipe-loads");
  CHECK(s->reason.find("Paddle 3.3.1 dlopens libnvrtc.so (anything JIT-compiled (CINN, fused kernels)), and the recipe "
                       "ships no libnvrtc.so.12: loader.nvrtc would fail at the gate") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE(
    "a matrix of includes only: one cell per entry, as GitHub Actions' include (not each merged into the first)") {
  auto p = plan_all(write("includes.yaml",
                          "repository: r\ninclude:\n"
                          "  - {variant: cpu, paddle: \"3.3.1\", python: \"3.11\", os: ubuntu22.04}\n"
                          "  - {variant: cpu, paddle: \"3.2.0\", python: \"3.11\", os: ubuntu22.04}\n"),
                    {"2026-11-22"});
  CHECK(tags(p) == std::vector<std::string>{"3.3.1", "3.2.0"});
}

TEST_CASE("recipe rules: an unprovable cuDNN, a second copy of the CUDA libraries, a TensorRT of another CUDA major") {
  // cuDNN: 2.6's cu118 build claims 8.6.0; the nvidia/cuda 11.8 cudnn image ships 8.9.6.50; the apt row makes it.
  auto p = plan_matrix(write("c118.yaml",
                             "axes:\n  variant: gpu\n  paddle: [\"2.6.2\"]\n  cuda: [\"11.8\"]\n  trt: none\n"
                             "  python: [\"3.8\"]\n  os: [ubuntu20.04]\n"),
                       kb(), {"2026-11-22"});
  REQUIRE(p.kept.size() == 1);
  CHECK(p.kept[0].cudnn_package == "libcudnn8=8.6.0.163-1+cuda11.8");
  // On Ubuntu 24.04 NVIDIA's repository has no cuDNN 8.6 for CUDA 11.8 in the KB, and 11.8 has no 24.04 image.
  auto none = plan_all(write("none.yaml",
                             "axes:\n  variant: gpu\n  paddle: [\"2.6.2\"]\n  cuda: [\"11.8\"]\n  trt: none\n"
                             "  python: [\"3.11\"]\n  os: [debian12]\ndefaults: {python_from: base, cuda_base: none,"
                             " base_image: \"my/base:1\"}\n"),
                       {"2026-11-22"});
  REQUIRE(none.skipped.size() == 1);
  CHECK(none.skipped[0].rule == "recipe-cudnn");
  CHECK(none.skipped[0].reason.find("cuda_base: none ships no cuDNN") != std::string::npos);
  // A wheel base for a CUDA line the KB has none for.
  auto w = plan_all(write("w.yaml",
                          "axes:\n  variant: gpu\n  paddle: [\"2.6.2\"]\n  cuda: [\"11.7\"]\n  trt: none\n"
                          "  python: [\"3.11\"]\n  os: [debian12]\ndefaults: {python_from: base, cuda_base: wheels}\n"),
                    {"2026-11-22"});
  REQUIRE(w.skipped.size() == 1);
  CHECK(w.skipped[0].rule == "recipe-base");
  CHECK(w.skipped[0].reason.find("has no base for CUDA 11.7 (it has 11.8, 12.6, 12.9, 13.0, 13.5)") !=
        std::string::npos);
  // TensorRT: Paddle 3.0's cu118 build with TensorRT 8.6 from PyPI's tensorrt==8.6.1.post1, a CUDA 12 build.
  auto t = plan_all(write("t.yaml",
                          "axes:\n  variant: gpu\n  paddle: [\"3.0.0\"]\n  cuda: [\"11.8\"]\n"
                          "  python: [\"3.11\"]\n  os: [ubuntu22.04]\n"),
                    {"2026-11-22"});
  REQUIRE(t.skipped.size() == 1);
  CHECK(t.skipped[0].rule == "trt-cuda-major");
  CHECK(t.skipped[0].reason.find("tensorrt==8.6.1.post1 is a CUDA 12 build of TensorRT 8.6") != std::string::npos);
}

TEST_CASE("skip reasons name the rule, the fact and its source") {
  auto p = paddle_plan();
  auto s = skipped(p, "2.6.2", "12.6");
  REQUIRE(s);
  CHECK(s->rule == "paddle-cuda");
  CHECK(s->reason == "paddle 2.6.2 × cuda 12.6: Paddle 2.6.2 GPU wheels exist for CUDA 11.2, 11.6, 11.7, 11.8, 12.0");
  CHECK(s->source.find("PaddlePaddle/docs (git mirror) release/2.6") != std::string::npos);
  auto trt = skipped(p, "2.6.2", "11.8");
  REQUIRE(trt);
  CHECK(trt->rule == "paddle-trt-install");
  auto pub = plan_matrix(
      write("pub.yaml",
            "only_published: true\ndefaults: {tensorrt_index: \"https://pypi.nvidia.com\"}\naxes:\n  variant: gpu\n"
            "  paddle: [\"2.6.2\"]\n  cuda: [\"11.8\", \"12.0\"]\n  python: [\"3.8\"]\n  os: [ubuntu20.04]\n"
            "include:\n  - {cuda: \"11.8\", build: {trt_pip_requirement: \"tensorrt==8.5.3.1\"}}\n"),
      kb(), {"2026-11-22"});
  REQUIRE(pub.skipped.size() == 1);
  CHECK(pub.skipped[0].rule == "published");
  CHECK(pub.skipped[0].reason.find(
            "tag 2.6.2-gpu-cuda11.8-cudnn8.6-trt8.5 is not among Paddle 2.6's published images") != std::string::npos);
}

TEST_CASE("rule trt-index: a -trt cell from PyPI's TensorRT stubs needs the matrix's tensorrt_index") {
  const std::string axes =
      "axes:\n  variant: gpu\n  paddle: [\"2.6.2\"]\n  cuda: [\"11.2\", \"12.0\"]\n"
      "  python: [\"3.8\"]\n  os: [ubuntu20.04]\n";
  auto none = plan_all(write("trt-none.yaml", axes), {"2026-11-22"});
  REQUIRE(none.skipped.size() == 1);  // 12.0: tensorrt==8.6.1.post1 from PyPI
  CHECK(none.skipped[0].rule == "trt-index");
  CHECK(none.skipped[0].reason.find("TensorRT 8.6 is installed with pip (tensorrt==8.6.1.post1), and no TensorRT index "
                                    "is given: PyPI's TensorRT packages are wheel-stub sdists") != std::string::npos);
  REQUIRE(none.kept.size() == 1);  // 11.2: the KB's NGC index serves real wheels, and keeps it
  CHECK(none.kept[0].overrides.at("trt_pip_index_url") == "https://pypi.ngc.nvidia.com");
  auto mirror = plan_all(write("trt-mirror.yaml", axes + "defaults: {tensorrt_index: \"https://mirror.example/nv\"}\n"),
                         {"2026-11-22"});
  REQUIRE(mirror.kept.size() == 2);
  CHECK(mirror.kept[1].overrides.at("trt_pip_index_url") == "https://mirror.example/nv");
  CHECK(mirror.kept[0].overrides.at("trt_pip_index_url") == "https://pypi.ngc.nvidia.com");
}

TEST_CASE("rule os-python: the OS must package the cell's Python, unless python_from: base") {
  const std::string axes =
      "axes:\n  variant: gpu\n  paddle: [\"2.6.2\"]\n  cuda: [\"12.0\"]\n  python: [\"3.8\", \"3.9\", \"3.10\"]\n"
      "  os: [ubuntu20.04]\ntag_template: \"{paddle}-cuda{cuda}-{py}\"\ndefaults: {tensorrt_index: "
      "\"https://pypi.nvidia.com\"}\n";
  auto p = plan_matrix(write("ospy.yaml", axes), kb(), {"2026-11-22"});
  CHECK(tags(p) == std::vector<std::string>{"2.6.2-cuda12.0-py38", "2.6.2-cuda12.0-py39"});
  REQUIRE(p.skipped.size() == 1);
  CHECK(p.skipped[0].rule == "os-python");
  CHECK(p.skipped[0].reason.rfind(
            "python 3.10 × os ubuntu20.04: Ubuntu 20.04 (focal) packages Python 3.8, 3.9, not 3.10", 0) == 0);
  CHECK(p.skipped[0].reason.find("python_from: base") != std::string::npos);
  CHECK(p.skipped[0].source.find("https://packages.ubuntu.com/focal/python3.9") != std::string::npos);
  // The OS fact is recorded with the kept cells (and is UNCONFIRMED for Ubuntu).
  CHECK(std::find(p.kept[0].sources.begin(), p.kept[0].sources.end(), kb().os_python("ubuntu20.04")->source) !=
        p.kept[0].sources.end());
  CHECK(std::any_of(p.kept[0].warnings.begin(), p.kept[0].warnings.end(), [](auto& w) {
    return w.find("UNCONFIRMED fact: Ubuntu 20.04 (focal) packages Python 3.8") != std::string::npos;
  }));
  // A base that ships Python: the OS archive is not consulted.
  auto base = plan_matrix(write("ospy-base.yaml", axes + "include:\n  - {python: \"3.10\", python_from: base}\n"), kb(),
                          {"2026-11-22"});
  CHECK(base.skipped.empty());
  CHECK(tags(base).size() == 3);
  // jammy packages 3.10 and 3.11, noble only 3.12; an OS the KB does not know is skipped unless python_from: base.
  auto jammy = plan_matrix(
      write("ospy-jammy.yaml",
            "axes:\n  variant: cpu\n  paddle: [\"3.1.0\"]\n  python: [\"3.9\", \"3.10\", \"3.11\", \"3.12\"]\n"
            "  os: [ubuntu22.04, ubuntu24.04, alpine3.20]\ntag_template: \"{paddle}-{py}-{os}\"\n"),
      kb(), {"2026-11-22"});
  CHECK(tags(jammy) ==
        std::vector<std::string>{"3.1.0-py310-ubuntu22.04", "3.1.0-py311-ubuntu22.04", "3.1.0-py312-ubuntu24.04"});
  auto unknown =
      std::find_if(jammy.skipped.begin(), jammy.skipped.end(), [](auto& s) { return s.axes.at("os") == "alpine3.20"; });
  REQUIRE(unknown != jammy.skipped.end());
  CHECK(unknown->rule == "os-python");
  CHECK(unknown->reason.find("the KB lists no Python packages for OS alpine3.20") != std::string::npos);
  // python_from takes apt or base.
  CHECK(error_of("ospy-bad.yaml", std::string(kHeader) + "defaults: {python_from: conda}\n")
            .find("ospy-bad.yaml:7:25: expected where Python comes from (apt, base), found 'conda'") !=
        std::string::npos);
}

TEST_CASE("trt: none — a cell that ships no TensorRT claims none and needs no install spec") {
  auto p = plan_matrix(write("trt-none.yaml",
                             "axes:\n  variant: gpu\n  paddle: [\"2.6.2\"]\n  cuda: [\"11.8\"]\n  trt: [none]\n"
                             "  python: [\"3.11\"]\n  os: [debian12]\n"
                             "defaults: {python_from: base, cuda_base: wheels, base_image: local/cuda:11.8}\n"),
                       kb(), {"2026-11-22"});
  REQUIRE(p.kept.size() == 1);
  CHECK(p.kept[0].trt.empty());
  CHECK(!p.kept[0].overrides.count("trt_pip_requirement"));
  CHECK(p.kept[0].tag == "2.6.2-gpu-cuda11.8-cudnn8.6");
  CHECK(p.kept[0].pip_requirement == "paddlepaddle-gpu==2.6.2");
}

TEST_CASE("rule paddle-trt-install: a cell that claims TensorRT installs it from the KB's pip spec") {
  auto p = paddle_plan();
  auto cell = [&](const std::string& tag) {
    auto it = std::find_if(p.kept.begin(), p.kept.end(), [&](auto& c) { return c.tag == tag; });
    REQUIRE(it != p.kept.end());
    return *it;
  };
  auto t105 = cell("3.0.0-gpu-cuda12.6-cudnn9.5-trt10.5");
  CHECK(t105.overrides.at("trt_pip_requirement") == "tensorrt-cu12==10.5.0");
  CHECK(t105.overrides.at("trt_pip_index_url") == "https://pypi.nvidia.com");  // the matrix's tensorrt_index
  CHECK(std::any_of(t105.sources.begin(), t105.sources.end(),
                    [](auto& s) { return s.find("pip index versions tensorrt-cu12") != std::string::npos; }));
  auto t80 = cell("2.6.2-gpu-cuda11.2-cudnn8.2-trt8.0");
  CHECK(t80.overrides.at("trt_pip_requirement") == "nvidia-tensorrt==8.0.3.4");
  CHECK(t80.overrides.at("trt_pip_index_url") == "https://pypi.ngc.nvidia.com");
  CHECK(std::any_of(t80.warnings.begin(), t80.warnings.end(), [](auto& w) {
    return w.find("UNCONFIRMED fact: TensorRT 8.0.3.4 pip install spec") != std::string::npos;
  }));
  CHECK(cell("2.6.2-gpu-cuda12.0-cudnn8.9-trt8.6").overrides.at("trt_pip_requirement") == "tensorrt==8.6.1.post1");
  // Every kept cell that claims TensorRT installs it; none that does not claims it.
  for (auto& c : p.kept) {
    INFO(c.tag);
    CHECK(c.trt.empty() == !c.overrides.count("trt_pip_requirement"));
    CHECK((c.tag.find("-trt") != std::string::npos) == !c.trt.empty());
  }
  // TensorRT 8.4.0.6 (Paddle 2.6, CUDA 11.6) has no install spec: skipped, naming rule, fact and source.
  auto s = skipped(p, "2.6.2", "11.6");
  REQUIRE(s);
  CHECK(s->rule == "paddle-trt-install");
  CHECK(s->reason.rfind("paddle 2.6.2 × cuda 11.6: Paddle 2.6 for CUDA 11.6 is built with TensorRT 8.4.0.6, but the KB "
                        "has no pip install spec",
                        0) == 0);
  CHECK(s->source.find("PaddlePaddle/docs (git mirror) release/2.6") != std::string::npos);
  // The matrix may name its own TensorRT requirement (and index); it wins over the KB's.
  auto own = plan_matrix(
      write("trt-own.yaml",
            "axes:\n  variant: gpu\n  paddle: [\"2.6.2\"]\n  cuda: [\"11.6\", \"12.0\"]\n  python: [\"3.8\"]\n"
            "  os: [ubuntu20.04]\ninclude:\n"
            "  - {cuda: \"11.6\", build: {trt_pip_requirement: \"nvidia-tensorrt==8.4.0.6\", trt_pip_index_url: "
            "\"https://pypi.ngc.nvidia.com\"}}\n"
            "  - {cuda: \"12.0\", build: {trt_pip_requirement: \"tensorrt==8.6.1\", trt_pip_index_url: "
            "\"https://mirror.example/nvidia\"}}\n"),
      kb(), {"2026-11-22"});
  REQUIRE(own.kept.size() == 2);
  CHECK(own.kept[0].tag == "2.6.2-gpu-cuda11.6-cudnn8.4-trt8.4");
  CHECK(own.kept[0].overrides.at("trt_pip_requirement") == "nvidia-tensorrt==8.4.0.6");
  CHECK(own.kept[1].overrides.at("trt_pip_requirement") == "tensorrt==8.6.1");
  // Releases whose images ship no TensorRT install none.
  CHECK(!cell("3.1.0-gpu-cuda12.6-cudnn9.5").overrides.count("trt_pip_requirement"));
}

TEST_CASE("rules: python range, cudnn mismatch, OS without nvidia/cuda tags") {
  auto p = plan_matrix(
      write("rules.yaml",
            "axes:\n  variant: gpu\n  paddle: [\"3.1.0\"]\n  cuda: [\"11.8\", \"12.6\"]\n"
            "  cudnn: [\"9.5\"]\n  python: [\"3.8\", \"3.10\", \"3.12\"]\n  os: [ubuntu22.04, ubuntu24.04]\n"
            "tag_template: \"{paddle}-gpu-cuda{cuda}-cudnn{cudnn}-{os}\"\n"),
      kb(), {"2026-11-22"});
  auto find_rule = [&](const std::string& r) {
    return std::find_if(p.skipped.begin(), p.skipped.end(), [&](auto& s) { return s.rule == r; });
  };
  REQUIRE(find_rule("paddle-python") != p.skipped.end());
  CHECK(find_rule("paddle-python")->reason.find("Paddle 3.1 supports Python 3.9-3.13") != std::string::npos);
  REQUIRE(find_rule("paddle-cudnn") != p.skipped.end());
  CHECK(find_rule("paddle-cudnn")->reason.find("built with cuDNN 8.9") != std::string::npos);
  // Paddle 2.6 needs the nvidia/cuda image of its CUDA for the OS; a 3.x wheel brings its CUDA and
  // starts from the OS base, so ubuntu24.04 is no obstacle for it.
  auto os = plan_matrix(write("rules-os.yaml",
                              "axes:\n  variant: gpu\n  paddle: [\"2.6.2\", \"3.1.0\"]\n  cuda: [\"11.8\"]\n"
                              "  trt: none\n  python: [\"3.12\"]\n  os: [ubuntu24.04]\n"),
                        kb(), {"2026-11-22"});
  CHECK(tags(os) == std::vector<std::string>{"3.1.0-gpu-cuda11.8-cudnn8.9"});
  REQUIRE(os.skipped.size() == 1);
  CHECK(os.skipped[0].rule == "nvidia-cuda-os");
  CHECK(os.skipped[0].reason.find(
            "cuda 11.8 × os ubuntu24.04: nvidia/cuda:11.8.0 images exist for ubuntu18.04, ubuntu20.04, ubuntu22.04") !=
        std::string::npos);
  CHECK(os.skipped[0].source.find("FMCL-Docker") != std::string::npos);
  CHECK(tags(p) ==
        std::vector<std::string>{"3.1.0-gpu-cuda12.6-cudnn9.5-ubuntu22.04", "3.1.0-gpu-cuda12.6-cudnn9.5-ubuntu24.04"});
}

TEST_CASE("include overrides a cell: local base and wheelhouse; ${VAR} expansion") {
  setenv("IMGTOOL_TEST_WH", "/tmp/wh", 1);
  auto p = plan_matrix(
      write("inc.yaml", std::string(kHeader) +
                            "include:\n  - {cuda: \"12.6\", base_image: \"imgtool-base/debian:bookworm-py3@sha256:" +
                            std::string(64, 'a') + "\", wheelhouse: \"${IMGTOOL_TEST_WH}\"}\n"),
      kb(), {"2026-11-22"});
  REQUIRE(p.kept.size() == 1);
  CHECK(p.kept[0].base_image == "imgtool-base/debian:bookworm-py3");
  CHECK(p.kept[0].base_digest == "sha256:" + std::string(64, 'a'));
  CHECK(p.kept[0].wheelhouse == "/tmp/wh");
  CHECK(p.kept[0].pip_index_url.empty());
  auto local = plan_matrix(kSrc + "/matrix/local.yaml", kb(), {"2026-11-22"});
  REQUIRE(local.kept.size() == 1);
  CHECK(local.kept[0].tag == "3.3.1");
  CHECK(local.kept[0].os == "debian12");
  CHECK(!local.kept[0].wheelhouse.empty());
}

TEST_CASE("JSON and YAML forms give the same plan") {
  std::string yaml = std::string(kHeader) + "exclude:\n  - {python: \"3.9\"}\n";
  std::string json =
      R"({"axes": {"variant": "gpu", "paddle": ["3.1.0"], "cuda": ["12.6"], "python": ["3.10"], "os": ["ubuntu22.04"]},
                         "exclude": [{"python": "3.9"}]})";
  auto a = to_json(plan_matrix(write("same.yaml", yaml), kb(), {"2026-11-22"}));
  auto b = to_json(plan_matrix(write("same.json", json), kb(), {"2026-11-22"}));
  CHECK(a == b);
  CHECK(a["kept"].size() == 1);
}

TEST_CASE("bad input: one line with file:line:col") {
  CHECK(error_of("syn.yaml", "axes: [\n").find("imgtool-matrix-test-syn.yaml:2:1: expected valid YAML") !=
        std::string::npos);
  CHECK(error_of("syn.json", "{\"axes\": }").find("syn.json:1:10: expected valid JSON") != std::string::npos);
  // A number too large for a double is nlohmann's out_of_range, not a parse_error (found by fuzz_matrix).
  std::string big = error_of("big.json", "{\"axes\":\n  {\"cuda\": [1E5555]}}");
  CHECK_MESSAGE(
      big.find("big.json:2:13: expected valid JSON, found number overflow parsing '1E5555'") != std::string::npos, big);
  CHECK(error_of("key.yaml", std::string(kHeader) + "colour: red\n")
            .find("key.yaml:7:1: expected a key of a matrix file") != std::string::npos);
  CHECK(error_of("axis.yaml", std::string(kHeader) + "  gcc: [\"8.2\"]\n")
            .find("axis.yaml:7:3: expected a key of axes") != std::string::npos);
  CHECK(error_of("ver.yaml", "axes:\n  paddle: [\"3.1.0\", \"9.9.9\"]\n")
            .find("ver.yaml:2:21: expected a Paddle version listed in the knowledge base") != std::string::npos);
  CHECK(error_of("mal.yaml", "axes:\n  cuda: [\"12.x\"]\n")
            .find("mal.yaml:2:10: expected a version like 12.6, found '12.x'") != std::string::npos);
  CHECK(error_of("tpl.yaml", std::string(kHeader) + "tag_template: \"{paddle}-{pyver}\"\n")
            .find("tpl.yaml:7:15: expected a valid tag template, found unknown placeholder '{pyver}'") !=
        std::string::npos);
  std::string coll = error_of("coll.yaml",
                              "axes:\n  variant: gpu\n  paddle: [\"3.1.0\"]\n  cuda: [\"12.6\"]\n  python: [\"3.10\", "
                              "\"3.11\"]\n  os: [ubuntu22.04]\n");
  CHECK(coll.find("coll.yaml:2:3: expected unique tags, found '3.1.0-gpu-cuda12.6-cudnn9.5'") != std::string::npos);
  std::string empty = error_of(
      "empty.yaml",
      "axes:\n  variant: gpu\n  paddle: [\"2.6.2\"]\n  cuda: [\"12.6\"]\n  python: [\"3.10\"]\n  os: [ubuntu22.04]\n");
  CHECK(empty.find("empty.yaml:2:3: expected at least one kept cell, found none") != std::string::npos);
  CHECK(error_of("env.yaml", std::string(kHeader) + "defaults: {wheelhouse: \"${IMGTOOL_SURELY_UNSET_VAR}\"}\n")
            .find("env.yaml:7:24: expected environment variable ${IMGTOOL_SURELY_UNSET_VAR}") != std::string::npos);
}

TEST_CASE("explain: the rule and source of a skipped cell") {
  auto items = explain(paddle_plan(), parse_selector("paddle=2.6.2,cuda=12.6"));
  REQUIRE(items.size() == 1);
  CHECK(!items[0].kept);
  CHECK(items[0].rule == "paddle-cuda");
  auto kept = explain(paddle_plan(), parse_selector("paddle=3.1.0,cuda=12.6"));
  REQUIRE(kept.size() == 1);
  CHECK(kept[0].tag == "3.1.0-gpu-cuda12.6-cudnn9.5");
  CHECK_THROWS_AS(parse_selector("gcc=8"), imgtool::InputError);
}

TEST_CASE("host query: V100 with driver 470.82.01 runs only CUDA 11.x cells, best first") {
  auto r = query_host(paddle_plan(), kb(), {"470.82.01", "V100", true});
  REQUIRE(r.fits.size() == 5);
  for (auto& f : r.fits) CHECK(f.cell.cuda.rfind("11.", 0) == 0);
  CHECK(r.fits[0].cell.tag == "3.3.1-gpu-cuda11.8-cudnn8.9");
  CHECK(r.fits.back().cell.tag == "2.6.2-gpu-cuda11.2-cudnn8.2-trt8.0");
  CHECK(r.fits.back().full_compat);
  CHECK(!r.fits[0].full_compat);
  auto rej = std::find_if(r.rejected.begin(), r.rejected.end(),
                          [](auto& x) { return x.cell.tag == "3.1.0-gpu-cuda12.6-cudnn9.5"; });
  REQUIRE(rej != r.rejected.end());
  CHECK(rej->rule == "host-driver");
  // Paddle documents >= 550.54.14 for its CUDA 12.6 builds: stricter than NVIDIA's 525.60.13, so it decides.
  CHECK(rej->reason.find(
            "CUDA 12.6 (Paddle 3.1.0) needs driver >= 550.54.14, decided by Paddle's floor for its CUDA 12.6 builds") !=
        std::string::npos);
  CHECK(!r.gpu_note.empty());  // "V100" names several variants, all compute capability 7.0
}

TEST_CASE("host query: the stricter of NVIDIA's and Paddle's driver floors decides, and says so") {
  // 535.104.05 passes NVIDIA's CUDA 12.x floor (525.60.13) but not Paddle's 550.54.14 for CUDA 12.6.
  auto r = query_host(paddle_plan(), kb(), {"535.104.05", "NVIDIA A100-SXM4-80GB", true});
  auto rej = std::find_if(r.rejected.begin(), r.rejected.end(),
                          [](auto& x) { return x.cell.tag == "3.2.0-gpu-cuda12.6-cudnn9.5"; });
  REQUIRE(rej != r.rejected.end());
  CHECK(rej->rule == "host-driver");
  CHECK(rej->reason.find("decided by Paddle's floor for its CUDA 12.6 builds (given for Paddle 3.0, held for every "
                         "Paddle on CUDA 12.6; "
                         "stricter than NVIDIA's 525.60.13)") != std::string::npos);
  CHECK(rej->source.find("paddleocr.ai") != std::string::npos);
  // 11.8 builds have no Paddle floor: NVIDIA's rule decides.
  Plan plan = paddle_plan();
  Cell c11 = *std::find_if(plan.kept.begin(), plan.kept.end(), [](auto& c) { return c.cuda == "11.8"; });
  CHECK(driver_floor(c11, kb()).rule.rfind("NVIDIA's minor-version compatibility floor", 0) == 0);
  // 3.3's CUDA 12.9 build: Paddle's floor (NVIDIA's 12.9 GA driver, UNCONFIRMED) decides; 3.2's names none,
  // and the same CUDA 12.9 runtime needs the same driver: one floor for the CUDA line (issue 32).
  for (const char* tag : {"3.3.1-gpu-cuda12.9-cudnn9.9", "3.2.0-gpu-cuda12.9-cudnn9.9"}) {
    auto r129 = std::find_if(r.rejected.begin(), r.rejected.end(), [&](auto& x) { return x.cell.tag == tag; });
    REQUIRE(r129 != r.rejected.end());
    CHECK(r129->reason.find("needs driver >= 575.51.03") != std::string::npos);
    CHECK(r129->reason.find("held for every Paddle on CUDA 12.9") != std::string::npos);
  }
  CHECK(r.fits.front().cell.tag == "3.3.1-gpu-cuda11.8-cudnn8.9");
  // 550.54.15 clears both.
  auto ok = query_host(paddle_plan(), kb(), {"550.54.15", "A100", true});
  CHECK(
      std::any_of(ok.fits.begin(), ok.fits.end(), [](auto& f) { return f.cell.tag == "3.2.0-gpu-cuda12.6-cudnn9.5"; }));
  CHECK_THROWS_WITH_AS(query_host(paddle_plan(), kb(), {"550.54.15", "RTX"}),
                       doctest::Contains("expected a GPU listed"), imgtool::InputError);
}

TEST_CASE("host query: a CUDA 13 image cannot serve a V100") {
  Plan p;
  Cell c;
  c.tag = "x-cuda13.0";
  c.variant = "gpu";
  c.paddle = "3.2.0";
  c.cuda = "13.0";
  c.min_driver = "580";
  c.min_driver_full = "580.65.06";
  p.kept.push_back(c);
  auto r = query_host(p, kb(), {"590.10", "Tesla V100-SXM2-32GB"});
  CHECK(r.fits.empty());
  REQUIRE(r.rejected.size() == 1);
  CHECK(r.rejected[0].rule == "host-arch");
  CHECK(r.rejected[0].reason.find("Volta (compute capability 7.0) is supported by CUDA 9.0 to 12.9") !=
        std::string::npos);
  auto h = query_host(p, kb(), {"590.10", "NVIDIA H100 80GB HBM3", true});
  CHECK(h.fits.size() == 1);
  CHECK_THROWS_AS(query_host(p, kb(), {"590.10", "Voodoo 5"}), imgtool::InputError);
  CHECK_THROWS_AS(query_host(p, kb(), {"abc", "V100"}), imgtool::InputError);
}

TEST_CASE("explain answers for combinations off the matrix's axes") {
  bool off = false;
  std::string m = kSrc + "/matrix/paddle.yaml";
  auto on = explain_any(m, kb(), parse_selector("paddle=3.1.0,cuda=12.6"), {"2026-11-22"}, off);
  CHECK_FALSE(off);
  REQUIRE(on.size() == 1);
  // Python 3.13 is not on paddle.yaml's axes: judged by the rules anyway.
  auto py = explain_any(m, kb(), parse_selector("paddle=2.6.2,python=3.13"), {"2026-11-22"}, off);
  CHECK(off);
  REQUIRE(!py.empty());
  for (auto& i : py) {
    CHECK_FALSE(i.kept);
    CHECK(i.reason.find("3.8-3.12") != std::string::npos);  // Paddle 2.6's Python range, with its source
    CHECK(!i.source.empty());
  }
  auto unknown = explain_any(m, kb(), parse_selector("paddle=9.9.9"), {"2026-11-22"}, off);
  REQUIRE(!unknown.empty());
  CHECK(unknown[0].rule == "paddle-release");
  CHECK_THROWS_AS(explain_any(m, kb(), parse_selector("python=three"), {"2026-11-22"}, off), imgtool::InputError);
}
