#include "matrix/kb.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/fs.h"
#include "tests/test_dirs.h"

using namespace imgtool::matrix;

static KnowledgeBase kb() { return KnowledgeBase::load(imgtool::testing::source_dir() + "/matrix/kb"); }

TEST_CASE("the KB loads and every fact has a source") {
  auto k = kb();
  CHECK(k.version().rfind("2026.11.3+sha256:", 0) == 0);
  CHECK(k.released() == "2026-11-26");
  CHECK(k.cudas().size() >= 19);
  for (auto& c : k.cudas()) CHECK(!c.source.empty());
  for (auto& a : k.archs()) CHECK(!a.source.empty());
  for (auto& g : k.gpus()) CHECK(!g.source.empty());
  for (auto& c : k.cudnns()) CHECK(!c.source.empty());
  for (auto& p : k.paddles()) {
    CHECK(!p.source.empty());
    CHECK(!p.cpu_fact.source.empty());
    for (auto& b : p.gpu) {
      CHECK(!b.source.empty());
      if (!b.trt_pip.requirement.empty()) CHECK(!b.trt_pip.source.empty());
    }
  }
  CHECK(k.os_pythons().size() >= 4);
  for (auto& o : k.os_pythons()) CHECK(!o.source.empty());
  for (auto& p : k.pythons()) CHECK(!p.source.empty());
  for (auto& i : k.images()) CHECK(!i.source.empty());
}

TEST_CASE("KB late 2026: Paddle 3.3 and 3.2.2's CUDA 13.0 build, CUDA 13.1-13.5, new GPUs, Python 3.14, OS rows") {
  auto k = kb();
  const PaddleRelease* p33 = k.paddle_release("3.3.1");
  REQUIRE(p33);
  CHECK(p33->series == "3.3");
  CHECK(p33->build_for("13.0")->cudnn == "9.13");
  CHECK(p33->build_for("13.0")->pip_cuda_libraries);
  CHECK(p33->build_for("12.9")->min_driver.driver == "575.51.03");
  CHECK(k.paddle_release("3.2.2")->build_for("13.0", "3.2.2"));
  CHECK(k.paddle_release("3.2.0")->build_for("13.0", "3.2.0") == nullptr);  // cu130 exists for 3.2.2 only
  CHECK(k.paddle_release("2.5.0")->series == "2.5");
  CHECK(k.paddle_release("2.4.0")->build_for("11.6")->cudnn == "8.4.0");
  CHECK_FALSE(k.paddle_release("2.6.2")->build_for("11.8")->pip_cuda_libraries);
  CHECK(k.paddle_release("3.0.0")->build_for("11.8")->trt_pip.cuda_major ==
        "12");  // tensorrt==8.6.1.post1: a CUDA 12 build
  CHECK(k.cuda("13.1")->min_driver_full == "590.44.01");
  CHECK(k.cuda("13.2")->min_driver_full == "595.45.04");
  CHECK(k.cuda("13.3")->min_driver_full == "610.43.02");
  CHECK(k.cuda("13.4")->unconfirmed);
  CHECK(k.cuda("13.5")->min_driver_full.empty());  // not found: unknown, never guessed
  CHECK(k.cuda("13.5")->min_driver_compat == "580");
  CHECK(k.cuda_images("13.1")->cudnn_shipped == "9.17.1.4");
  for (auto name : {"NVIDIA H800 80GB HBM3", "NVIDIA H800 PCIe", "NVIDIA H800 NVL", "NVIDIA B300 SXM6 AC",
                    "NVIDIA GB200", "NVIDIA H200 NVL", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
                    "NVIDIA GeForce RTX 5080", "NVIDIA GeForce RTX 5070 Ti", "NVIDIA GB10", "NVIDIA A10G", "NVIDIA A2",
                    "NVIDIA RTX 6000 Ada Generation", "Tesla V100S-PCIE-32GB", "Orin (nvgpu)"}) {
    const GpuSpec* g = k.find_gpu(name);
    REQUIRE_MESSAGE(g, name);
    CHECK(k.arch_for_cc(g->cc) != nullptr);
  }
  CHECK(k.find_gpus("NVIDIA H800").size() == 3);  // SXM, PCIe, NVL: the bare name is a family
  CHECK(k.find_gpu("GB10")->cc == "12.1");
  CHECK(k.python_eol("3.14")->eol == "2030-10-31");
  CHECK(k.os_python("debian13")->default_python == "3.13");
  CHECK(k.os_python("ubuntu26.04")->provides("3.14"));
  CHECK(k.cpu_base("debian13")->image == "debian:trixie");
}

TEST_CASE("KB libraries: sonames per major, the complete base's set, what Paddle loads and how it asks") {
  auto k = kb();
  CHECK(k.library("cufft")->soname("11") == "libcufft.so.10");  // one behind the CUDA major
  CHECK(k.library("cufft")->soname("13") == "libcufft.so.12");
  CHECK(k.library("nvrtc")->soname("11") == "libnvrtc.so.11.2");
  CHECK(k.library("curand")->soname("13") == "libcurand.so.10");
  CHECK(k.library("nvjitlink")->soname("11").empty());
  CHECK(k.library("cublas")->wheel_dirs.at("13") == "nvidia/cu13/lib");
  CHECK(k.library("cudnn")->keyed_by == "cudnn");
  CHECK(k.library("cudnn")->soname("9") == "libcudnn.so.9");
  CHECK(k.library("cublasLt")->unversioned() == "libcublasLt.so");
  CHECK(k.library("npp")->unversioned() == "libnppc.so");
  REQUIRE(k.runtime_set("11"));
  CHECK(k.runtime_set("11")->libs.size() == 13);
  CHECK(k.runtime_set("12")->libs.size() == 14);  // + nvJitLink
  CHECK(k.library("nvtx")->soname("12") == "libnvToolsExt.so.1");
  CHECK(k.library("nvtx")->soname("12.6") == "libnvToolsExt.so.1");  // no 12.6 row: the major's
  CHECK(k.library("nvtx")->soname("12.9") == "libnvtx3interop.so.1");
  CHECK(k.library("nvtx")->unversioned() == "libnvToolsExt.so");
  const PaddleLoads* p26 = k.paddle_loads("2.6.2", false);
  REQUIRE(p26);
  CHECK(p26->dlopen == "unversioned");
  CHECK(p26->extra_dirs.at("cudnn") == std::vector<std::string>{"/usr/local/cuda/lib64"});
  CHECK(k.paddle_loads("2.6.2", true) == nullptr);
  const PaddleLoads* p33 = k.paddle_loads("3.3.1", true);
  REQUIRE(p33);
  CHECK(p33->dlopen == "soname");
  CHECK(p33->unconfirmed);
  // Every CUDA line the KB supports has a wheel base with the runtime set's libraries.
  for (auto cuda : {"11.8", "12.6", "12.9", "13.0", "13.5"}) {
    const CudaWheelBase* b = k.cuda_wheels(cuda);
    REQUIRE_MESSAGE(b, cuda);
    std::string major = std::string(cuda).substr(0, 2);
    for (const auto& lib : k.runtime_set(major)->libs) {
      const NvidiaLibrary* l = k.library(lib);
      std::string key = l->keyed_by == "cudnn" ? b->cudnn.substr(0, b->cudnn.find('.')) : std::string(cuda);
      INFO(cuda << " " << lib);
      CHECK(b->wheel_providing(l->soname(key)) != nullptr);
    }
  }
  CHECK(k.cuda_wheels("13.0")->image() == "imgtool-base/cuda:13.0-cudnn9-runtime-bookworm");
  CHECK(k.tensorrt_facts("10.13.0").size() == 1);
  // Newest pins per package, and the newer releases the bases pin nowhere on purpose.
  CHECK(k.newest_pin("nvidia-cuda-runtime") == "13.5.37");
  CHECK(k.newest_pin("nvidia-cudnn-cu12") == "9.10.2.21");
  CHECK(k.newest_pin("nvidia-nope").empty());
  REQUIRE(k.unpinned_wheel("nvidia-cudnn-cu12"));
  CHECK(k.unpinned_wheel("nvidia-cudnn-cu12")->version == "9.28.0.42");
  CHECK(k.unpinned_wheel("nvidia-cudnn-cu12")->date == "2026-11-04");
  CHECK(k.unpinned_wheel("nvidia-cuda-runtime") == nullptr);
}

TEST_CASE("KB facts: drivers, unconfirmed marks, releases") {
  auto k = kb();
  CHECK(k.cuda("12.6")->min_driver_compat == "525.60.13");
  CHECK(k.cuda("12.6.3")->min_driver_full == "560.28.03");
  CHECK(k.cuda("11.8")->min_driver_compat == "450.80.02");
  CHECK(k.cuda("12.7") == nullptr);
  CHECK(k.arch_for_cc("7.0")->last_cuda == "12.9");
  CHECK(k.arch_for_cc("7.2")->unconfirmed);
  CHECK(k.paddle_release("2.6.2")->series == "2.6");
  CHECK(k.paddle_release("2.6.2")->build_for("12.0")->cudnn == "8.9.1");
  CHECK(k.paddle_release("3.1.0")->build_for("12.9")->unconfirmed);
  CHECK(k.paddle_release("9.9.9") == nullptr);
  CHECK(k.cuda_images("12.6")->full == "12.6.3");
  CHECK(k.cuda_images("12.6")->cudnn_tag == "cudnn");
  CHECK(k.cudnn_facts("8.9").size() == 3);  // 8.9.0-8.9.1, 8.9.5-8.9.6, 8.9.7
  // Python per OS (kb/os.yaml): focal has no 3.10, jammy has no 3.8, Debian 12 is 3.11 (confirmed).
  CHECK(k.os_python("ubuntu20.04")->provides("3.8"));
  CHECK(k.os_python("ubuntu20.04")->provides("3.9"));
  CHECK_FALSE(k.os_python("ubuntu20.04")->provides("3.10"));
  CHECK(k.os_python("ubuntu20.04")->unconfirmed);
  CHECK_FALSE(k.os_python("ubuntu22.04")->provides("3.8"));
  CHECK(k.os_python("ubuntu24.04")->default_python == "3.12");
  CHECK(k.os_python("debian12")->provides("3.11.2"));
  CHECK_FALSE(k.os_python("debian12")->unconfirmed);
  CHECK(k.os_python("centos7") == nullptr);
  // TensorRT install specs per Paddle GPU build.
  CHECK(k.paddle_release("3.0.0")->build_for("12.6")->trt_pip.requirement == "tensorrt-cu12==10.5.0");
  CHECK_FALSE(k.paddle_release("3.0.0")->build_for("12.6")->trt_pip.unconfirmed);
  CHECK(k.paddle_release("2.6.2")->build_for("12.0")->trt_pip.unconfirmed);
  CHECK(k.paddle_release("2.6.2")->build_for("11.6")->trt_pip.requirement.empty());
  CHECK(k.paddle_release("3.1.0")->build_for("12.6")->trt.empty());
}

TEST_CASE("find_gpu: one row per variant, named as nvidia-smi prints it; family names are ambiguous") {
  auto k = kb();
  CHECK(k.find_gpu("tesla v100-sxm2-32gb")->memory_gb == 32);
  CHECK(k.find_gpu("NVIDIA H100 80GB HBM3")->form == "SXM5");
  CHECK(k.find_gpu("NVIDIA H100 PCIe")->bw_GBps == 2000);
  CHECK(k.find_gpu("NVIDIA A100-SXM4-80GB")->bw_GBps == 2039);
  CHECK(k.find_gpu("NVIDIA A100-SXM4-40GB")->bw_GBps == 1555);
  CHECK(k.find_gpu("NVIDIA A100-PCIE-40GB")->bw_GBps == 1555);
  CHECK(k.find_gpu("NVIDIA A100 80GB PCIe")->bw_GBps == 1935);
  CHECK(k.find_gpu("NVIDIA L40S")->name == "NVIDIA L40S");
  CHECK(k.find_gpu("NVIDIA L40")->name == "NVIDIA L40");  // not L4 or L40S: whole names first
  CHECK(k.find_gpu("NVIDIA L4")->name == "NVIDIA L4");
  // A family name alone names several rows: ambiguous, unless memory or form factor says which.
  CHECK(k.find_gpu("A100") == nullptr);
  CHECK(k.find_gpus("A100").size() == 4);
  CHECK(k.find_gpu("H100") == nullptr);
  CHECK(k.find_gpus("A100 40GB").size() == 2);
  CHECK(k.find_gpu("A100 SXM4 40GB")->bw_GBps == 1555);
  CHECK(k.find_gpu("A100 PCIe 80GB")->bw_GBps == 1935);
  CHECK(k.find_gpu("H100 SXM")->name == "NVIDIA H100 80GB HBM3");
  CHECK(k.find_gpu("H100 NVL")->memory_gb == 94);
  CHECK(k.find_gpus("Imaginary 9000").empty());
  CHECK(k.find_gpus("A100 40 g").size() == 2);           // "g" alone, and spaces before it
  CHECK(k.find_gpus("A100 40gbx").size() == 4);          // not a word's end: no size named
  CHECK(k.find_gpus("A100 7 apples 80GB").size() == 2);  // the first number followed by g/gb
  // Long queries (std::regex recursed per character: SIGSEGV) and numbers past int (stoi threw).
  CHECK(k.find_gpus("A100 " + std::string(300000, '4') + "GB").size() == 4);
  CHECK(k.find_gpus("A100 " + std::string(300000, ' ') + "40GB").size() == 2);
  // The variants Paddle users run, each with compute capability and peaks.
  for (auto name : {"NVIDIA A800-SXM4-80GB", "NVIDIA H800 80GB HBM3", "NVIDIA H20", "NVIDIA L20", "NVIDIA A30",
                    "NVIDIA A40", "NVIDIA L40", "Tesla P100-PCIE-16GB", "Tesla P4", "Tesla P40",
                    "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3090", "NVIDIA RTX A6000"}) {
    const GpuSpec* g = k.find_gpu(name);
    REQUIRE_MESSAGE(g, name);
    CHECK(k.arch_for_cc(g->cc) != nullptr);
    CHECK(g->memory_gb > 0);
    CHECK(g->bw_GBps > 0);
    CHECK(g->fp32_tflops > 0);
    CHECK(!g->source.empty());
  }
  CHECK(k.find_gpu("NVIDIA H20")->cc == "9.0");
  CHECK(k.find_gpu("Tesla P40")->fp16_tensor_tflops == 0);  // Pascal: no tensor cores
  CHECK(k.find_gpu("V100") == nullptr);
  CHECK(k.find_gpu("Tesla T4")->unconfirmed);
}

TEST_CASE("KB corrections: cuDNN <-> CUDA rows, 12.8/12.9 images, Paddle's driver floor") {
  auto k = kb();
  auto supports = [&](const std::string& cudnn, const std::string& cuda) {
    for (auto* f : k.cudnn_facts(cudnn))
      for (auto& r : f->cuda)
        if (r.contains(*imgtool::Version::parse(cuda))) return true;
    return false;
  };
  CHECK(supports("9.4", "11.8"));
  CHECK(supports("9.4", "12.6"));
  CHECK(supports("9.4", "12.0"));
  CHECK_FALSE(supports("9.4", "12.8"));
  CHECK(supports("8.8", "12.0"));
  CHECK(supports("9.3", "12.6"));
  CHECK_FALSE(supports("9.2", "12.6"));
  CHECK(!k.cuda_images("12.8")->cudnn_shipped.empty());
  CHECK(!k.cuda_images("12.9")->cudnn_shipped.empty());
  auto* b = k.paddle_release("3.2.0")->build_for("12.6");
  CHECK(b->min_driver.driver == "550.54.14");
  CHECK(b->min_driver.source.find("550.54.14") != std::string::npos);
  CHECK(k.paddle_release("3.2.0")->build_for("11.8")->min_driver.driver.empty());
}

TEST_CASE("bad KB data: file:line:col") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "imgtool-kb-bad";
  fs::remove_all(dir);
  fs::copy(imgtool::testing::source_dir() + "/matrix/kb", dir);
  // cuda_wheels.yaml not_pinned: a package no base pins, or a version not newer than the newest pin.
  std::string wheels = imgtool::read_file(dir / "cuda_wheels.yaml");
  auto row = [&](const std::string& r) {
    std::ofstream(dir / "cuda_wheels.yaml") << wheels.substr(0, wheels.find("\nnot_pinned:") + 1) << "not_pinned:\n"
                                            << r;
  };
  row("  - {package: nvidia-nope, version: \"1.0\", date: \"2026-11-01\", source: s}\n");
  CHECK_THROWS_WITH_AS(KnowledgeBase::load(dir.string()),
                       doctest::Contains("expected a package a base in 'cuda_wheels' pins"), imgtool::InputError);
  row("  - {package: nvidia-cuda-runtime, version: \"13.5.37\", date: \"2026-11-01\", source: s}\n");
  CHECK_THROWS_WITH_AS(KnowledgeBase::load(dir.string()),
                       doctest::Contains("expected a version newer than the newest pin 13.5.37"), imgtool::InputError);
  row("  - {package: nvidia-cuda-runtime, version: \"13.6.1\", date: \"Nov 1\", source: s}\n");
  CHECK_THROWS_WITH_AS(KnowledgeBase::load(dir.string()), doctest::Contains("cuda_wheels.yaml:"), imgtool::InputError);
  std::ofstream(dir / "cuda_wheels.yaml") << wheels;
  std::ofstream(dir / "python.yaml") << "python:\n  - {python: \"3.x\", eol: \"2020-01-01\", source: s}\n";
  try {
    KnowledgeBase::load(dir.string());
    FAIL("expected InputError");
  } catch (const imgtool::InputError& e) {
    CHECK(std::string(e.what()).find("python.yaml:2:") != std::string::npos);
    CHECK(std::string(e.what()).find("'3.x'") != std::string::npos);
  }
  std::ofstream(dir / "python.yaml") << "python:\n  - {python: \"3.10\", eol: \"2020-01-01\"}\n";
  CHECK_THROWS_WITH_AS(KnowledgeBase::load(dir.string()), doctest::Contains("expected key 'source'"),
                       imgtool::InputError);
  fs::copy_file(imgtool::testing::source_dir() + "/matrix/kb/python.yaml", dir / "python.yaml",
                fs::copy_options::overwrite_existing);
  std::ofstream(dir / "os.yaml") << "os:\n  - {os: ubuntu20.04, python: [\"3.x\"], source: s}\n";
  CHECK_THROWS_WITH_AS(KnowledgeBase::load(dir.string()), doctest::Contains("os.yaml:2:"), imgtool::InputError);
  std::ofstream(dir / "os.yaml") << "os:\n  - {os: ubuntu20.04, python: [\"3.8\"]}\n";
  CHECK_THROWS_WITH_AS(KnowledgeBase::load(dir.string()), doctest::Contains("expected key 'source'"),
                       imgtool::InputError);
  fs::remove(dir / "os.yaml");
  CHECK_THROWS_WITH_AS(KnowledgeBase::load(dir.string()), doctest::Contains("os.yaml: expected a knowledge-base file"),
                       imgtool::InputError);
  fs::remove_all(dir);
}
