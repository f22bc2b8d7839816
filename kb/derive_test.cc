// `imgtool kb derive` on the real wheels: PyPI's paddlepaddle-gpu 2.6.2 (a CUDA 11.8 / cuDNN 8.6 build
// whose version file records no architectures: they are read from its libraries' fat binaries)
// and paddlepaddle 3.3.1 (CPU; its version file has compiled_cuda_archs = []), both from the
// suite's cached wheelhouses; then a wheel made here with Python's zipfile whose version file and
// libraries disagree (the cross-check), and bad input.
#include "kb/derive.h"

#include <doctest/doctest.h>

#include <fstream>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "matrix/kb.h"
#include "scan/testing/fatbin_bytes.h"
#include "tests/fixtures.h"
#include "tests/gpu_images.h"

using namespace imgtool;
namespace fs = std::filesystem;
namespace fx = imgtool::testing;

namespace {

fs::path wheel_in(const std::string& dir, const std::string& prefix) {
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) return e.path();
  throw Error("no " + prefix + "* wheel in " + dir);
}

std::string cpu_wheelhouse_331() {
  auto r = run({fx::source_dir() + "/scripts/wheelhouse.sh", "3.11", "paddlepaddle==3.3.1"});
  if (!r.ok()) throw Error("wheelhouse.sh failed: " + r.err);
  return fx::last_line(r.out);
}

// A wheel written by Python's zipfile (as `wheel` writes them): files = path -> bytes.
fs::path make_wheel(const fs::path& dir, const std::string& name, const std::map<std::string, std::string>& files) {
  fs::create_directories(dir / "src");
  std::string script = "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n";
  int i = 0;
  for (auto& [path, bytes] : files) {
    fs::path f = dir / "src" / std::to_string(i++);
    write_file_atomic(f, bytes);
    script += "z.write(" + nlohmann::json(f.string()).dump() + ", " + nlohmann::json(path).dump() + ")\n";
  }
  script += "z.close()\n";
  fs::path whl = dir / name;
  auto r = run({"python3", "-c", script, whl.string()});
  REQUIRE_MESSAGE(r.ok(), r.err);
  return whl;
}

}  // namespace

TEST_CASE("kb derive, paddlepaddle-gpu 2.6.2: CUDA 11.8, cuDNN 8.6.0, no pip CUDA libraries, sm_61..sm_86 and no PTX") {
  fs::path whl = wheel_in(fx::gpu_wheelhouse(), "paddlepaddle_gpu-2.6.2-");
  kb::DerivedRows d = kb::derive(kb::read_wheel(whl));
  CHECK(d.package == "paddlepaddle-gpu");
  CHECK(d.version == "2.6.2");
  CHECK(d.series == "2.6");
  CHECK(d.python_tag == "cp311");
  CHECK(d.gpu);
  CHECK(d.cuda == "11.8");
  CHECK(d.cudnn == "8.6.0");
  CHECK_FALSE(d.pip_cuda_libraries);
  CHECK(d.nvidia_requires.empty());
  CHECK(d.version_file_archs.empty());  // 2.6 records none: the libraries are the only source
  CHECK(d.compiled_archs == "sm_61,sm_70,sm_75,sm_80,sm_86");
  CHECK(d.archs_by_library.at("paddle/libs/libflashattn.so") == "sm_80,sm_86");
  CHECK(d.warnings.empty());
  CHECK(d.sha256 == "sha256:" + sha256_file_hex(whl.string()));
  // The KB's row for this build is this command's output.
  auto kb = matrix::KnowledgeBase::load_default();
  const matrix::PaddleGpuBuild* b = kb.paddle_release("2.6.2")->build_for("11.8");
  REQUIRE(b);
  CHECK(b->compiled_archs == d.compiled_archs);
  CHECK(b->archs_source.find(d.sha256) != std::string::npos);
  std::string yaml = kb::render_yaml(d);
  CHECK(yaml.find("compiled_archs: \"sm_61,sm_70,sm_75,sm_80,sm_86\"") != std::string::npos);
  CHECK(yaml.find("pip_cuda_libraries: false") != std::string::npos);
}

TEST_CASE("kb derive, paddlepaddle 3.3.1: a CPU wheel (with_pip_cuda_libraries 'ON' is not taken for a GPU build)") {
  fs::path whl = wheel_in(cpu_wheelhouse_331(), "paddlepaddle-3.3.1-");
  kb::WheelFacts w = kb::read_wheel(whl);
  CHECK(w.version_vars.at("with_pip_cuda_libraries") == "ON");
  REQUIRE(w.compiled_cuda_archs);
  CHECK(w.compiled_cuda_archs->empty());
  kb::DerivedRows d = kb::derive(w);
  CHECK(d.version == "3.3.1");
  CHECK_FALSE(d.gpu);
  CHECK(d.cuda.empty());
  CHECK(d.compiled_archs.empty());
  CHECK(d.python_tag == "cp311");
  CHECK(d.python_range == "3.9-3.13");  // its classifiers; the KB's 3.3 row says the same
  CHECK(matrix::KnowledgeBase::load_default().paddle_release("3.3.1")->python.text() == d.python_range);
  // Through the CLI: YAML and JSON.
  auto r = fx::imgtool({"kb", "derive", whl.string(), "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j.at(0).at("version") == "3.3.1");
  CHECK(j.at(0).at("gpu") == false);
}

TEST_CASE("kb derive: the version file's compiled_cuda_archs is checked against the libraries; nvidia-* pins listed") {
  fx::ScratchDir dir("kb-derive");
  using namespace imgtool::scan::testing;
  std::string lib = fat_library({{{2, 80, 64}, {2, 86, 64}}, {{2, 80, 32}, {2, 86, 32}, {1, 86, 16}}});
  fs::path whl = make_wheel(
      dir.path, "paddlepaddle_gpu-3.3.1-cp312-cp312-manylinux1_x86_64.whl",
      {{"paddle/version/__init__.py",
        "full_version = '3.3.1'\ncuda_version = '12.9'\ncudnn_version = '9.9.0'\n"
        "with_pip_cuda_libraries = 'ON'\ncompiled_cuda_archs = [80, 86, 90]\n"},
       {"paddle/libs/libphi_gpu.so", lib},
       {"paddlepaddle_gpu-3.3.1.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: paddlepaddle-gpu\nVersion: 3.3.1\nRequires-Python: >=3.9\n"
        "Requires-Dist: httpx\nRequires-Dist: nvidia-cudnn-cu12==9.9.0.52; platform_system == \"Linux\"\n"
        "Requires-Dist: nvidia-cublas-cu12==12.9.0.13; platform_system == \"Linux\"\n\nbody\n"},
       {"paddlepaddle_gpu-3.3.1.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: cp312-cp312-manylinux1_x86_64\n"}});
  kb::DerivedRows d = kb::derive(kb::read_wheel(whl));
  CHECK(d.gpu);
  CHECK(d.pip_cuda_libraries);
  CHECK(d.nvidia_requires == std::vector<std::string>{"nvidia-cublas-cu12==12.9.0.13", "nvidia-cudnn-cu12==9.9.0.52"});
  CHECK(d.compiled_archs == "sm_80,sm_86,compute_86");
  CHECK(d.version_file_archs == "sm_80,sm_86,sm_90");
  REQUIRE(d.warnings.size() == 1);
  CHECK(d.warnings[0].find("compiled_cuda_archs sm_80,sm_86,sm_90, the libraries hold machine code for sm_80,sm_86") !=
        std::string::npos);
  CHECK(kb::render_yaml(d).find("# WARNING: paddle/version") != std::string::npos);
}

TEST_CASE("kb derive: a file that is no wheel is one line, exit 2") {
  fx::ScratchDir dir("kb-derive-bad");
  write_file_atomic(dir.path / "x.whl", "not a zip at all");
  CHECK_THROWS_AS(kb::read_wheel(dir.path / "x.whl"), InputError);
  auto r = fx::imgtool({"kb", "derive", (dir.path / "x.whl").string()});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find((dir.path / "x.whl").string() + ": expected a wheel") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  auto missing = fx::imgtool({"kb", "derive", (dir.path / "none.whl").string()});
  CHECK(missing.exit_code == 2);
}

TEST_CASE("kb derive: a version file value that is no plain version is one line naming field and value, exit 2") {
  fx::ScratchDir dir("kb-derive-hostile");
  fs::path whl = make_wheel(
      dir.path, "paddlepaddle_gpu-3.3.1-cp312-cp312-manylinux1_x86_64.whl",
      {{"paddle/version/__init__.py", "cuda_version = '12.6\" \x1b[2J\xe2\x80\xaeinjected: \"1'\n"},
       {"paddlepaddle_gpu-3.3.1.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: paddlepaddle-gpu\nVersion: 3.3.1\n\n"},
       {"paddlepaddle_gpu-3.3.1.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: cp312-cp312-manylinux1_x86_64\n"}});
  auto r = fx::imgtool({"kb", "derive", whl.string()});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find(whl.string() + ": paddle/version/__init__.py: cuda_version: expected a plain version") !=
        std::string::npos);
  CHECK(r.err.find("found '12.6\" \\x1b[2J\\u202einjected: \"1'") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}
