#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "matrix/kb.h"

using namespace imgtool::matrix;

static KnowledgeBase kb() { return KnowledgeBase::load(std::string(IMGTOOL_SOURCE_DIR) + "/matrix/kb"); }

TEST_CASE("the KB loads and every fact has a source") {
  auto k = kb();
  CHECK(k.version().rfind("2026.11.1+sha256:", 0) == 0);
  CHECK(k.cudas().size() >= 19);
  for (auto& c : k.cudas()) CHECK(!c.source.empty());
  for (auto& a : k.archs()) CHECK(!a.source.empty());
  for (auto& g : k.gpus()) CHECK(!g.source.empty());
  for (auto& c : k.cudnns()) CHECK(!c.source.empty());
  for (auto& p : k.paddles()) {
    CHECK(!p.source.empty());
    CHECK(!p.cpu_fact.source.empty());
    for (auto& b : p.gpu) CHECK(!b.source.empty());
  }
  for (auto& p : k.pythons()) CHECK(!p.source.empty());
  for (auto& i : k.images()) CHECK(!i.source.empty());
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
  CHECK(k.cudnn_facts("8.9").size() == 2);
}

TEST_CASE("find_gpu: names, aliases, device names, case-insensitive") {
  auto k = kb();
  CHECK(k.find_gpu("V100")->cc == "7.0");
  CHECK(k.find_gpu("tesla v100-sxm2-32gb")->name == "V100 SXM2 32GB");
  CHECK(k.find_gpu("NVIDIA H100 80GB HBM3")->name == "H100 SXM5");
  CHECK(k.find_gpu("NVIDIA H100 PCIe")->name == "H100 PCIe");
  CHECK(k.find_gpu("NVIDIA A100-SXM4-80GB")->name == "A100 SXM4 80GB");
  CHECK(k.find_gpu("NVIDIA A100-PCIE-40GB")->name == "A100 PCIe 40GB");
  CHECK(k.find_gpu("NVIDIA L40S")->name == "L40S");
  CHECK(k.find_gpu("NVIDIA L4")->name == "L4");
  CHECK(k.find_gpu("NVIDIA L40") == nullptr);  // not L4: aliases match whole words
  CHECK(k.find_gpu("V100")->bf16_tensor_tflops == 0);
  CHECK(k.find_gpu("T4")->unconfirmed);
}

TEST_CASE("bad KB data: file:line:col") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "imgtool-kb-bad";
  fs::remove_all(dir);
  fs::copy(std::string(IMGTOOL_SOURCE_DIR) + "/matrix/kb", dir);
  std::ofstream(dir / "python.yaml") << "python:\n  - {python: \"3.x\", eol: \"2020-01-01\", source: s}\n";
  try {
    KnowledgeBase::load(dir.string());
    FAIL("expected InputError");
  } catch (const imgtool::InputError& e) {
    CHECK(std::string(e.what()).find("python.yaml:2:") != std::string::npos);
    CHECK(std::string(e.what()).find("'3.x'") != std::string::npos);
  }
  std::ofstream(dir / "python.yaml") << "python:\n  - {python: \"3.10\", eol: \"2020-01-01\"}\n";
  CHECK_THROWS_WITH_AS(KnowledgeBase::load(dir.string()), doctest::Contains("expected key 'source'"), imgtool::InputError);
  fs::remove_all(dir);
}
