// `kb derive` on hostile wheels, all made here (kb/testing/zip_bytes.h, Python's zipfile): the zip
// read by its central directory as pip reads it (kb/zip.h), the version file's values checked,
// the inflate budget, and YAML / JSON that no wheel string can steer or repaint.
#include "kb/wheel.h"

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/process.h"
#include "kb/derive.h"
#include "kb/testing/zip_bytes.h"
#include "matrix/kb.h"
#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::kb::testing;
namespace fs = std::filesystem;
namespace fx = imgtool::testing;

namespace {

const std::string kVersionPy = "full_version = '3.3.1'\ncuda_version = '12.6'\ncudnn_version = '9.5.1'\n";

kb::WheelFacts read(const std::vector<ZipFile>& files, const kb::WheelReadOptions& o = {}) {
  return kb::read_wheel_bytes(zip_bytes(files), "w.whl", o);
}

// The one-line refusal read_wheel_bytes gives `files` ("" when it reads them).
std::string refusal(const std::vector<ZipFile>& files, const kb::WheelReadOptions& o = {},
                    const std::string& prefix = "") {
  try {
    kb::read_wheel_bytes(zip_bytes(files, prefix), "w.whl", o);
  } catch (const InputError& e) {
    std::string m = e.what();
    CHECK(m.find('\n') == std::string::npos);
    CHECK(m.rfind("w.whl: ", 0) == 0);
    return m;
  }
  return "";
}

std::vector<ZipFile> with(std::vector<ZipFile> files, const ZipFile& more, bool front = false) {
  files.insert(front ? files.begin() : files.end(), more);
  return files;
}

}  // namespace

TEST_CASE(
    "wheel zip: a plain wheel, written here and by Python's zipfile streaming (data descriptors), reads the same") {
  kb::WheelFacts w = read(gpu_wheel_files(kVersionPy));
  CHECK(w.name == "paddlepaddle-gpu");
  CHECK(w.version_vars.at("cuda_version") == "12.6");
  CHECK(w.gpu_code.at("paddle/libs/libphi_gpu.so").text() == "sm_80,sm_90");
  fx::ScratchDir dir("kb-wheel-py");
  std::string script =
      "import sys, zipfile\n"
      "class Pipe:\n"  // not seekable: zipfile writes flag bit 3 and a data descriptor per entry
      "    def __init__(self, f): self.f = f; self.n = 0\n"
      "    def write(self, b): self.n += len(b); return self.f.write(b)\n"
      "    def tell(self): return self.n\n"
      "    def flush(self): self.f.flush()\n"
      "out = open(sys.argv[1], 'wb')\n"
      "z = zipfile.ZipFile(Pipe(out), 'w', zipfile.ZIP_DEFLATED)\n"
      "for i in range(2, len(sys.argv), 2):\n"
      "    with z.open(sys.argv[i], 'w') as f: f.write(open(sys.argv[i + 1], 'rb').read())\n"
      "z.close(); out.close()\n";
  std::vector<std::string> argv = {"python3", "-c", script, (dir.path / "p.whl").string()};
  int i = 0;
  for (const auto& f : gpu_wheel_files(kVersionPy)) {
    write_file_atomic(dir.path / std::to_string(i), f.data);
    argv.insert(argv.end(), {f.name, (dir.path / std::to_string(i++)).string()});
  }
  auto r = run(argv);
  REQUIRE_MESSAGE(r.ok(), r.err);
  kb::WheelFacts p = kb::read_wheel(dir.path / "p.whl");
  CHECK(p.version_vars == w.version_vars);
  CHECK(p.gpu_code.at("paddle/libs/libphi_gpu.so").text() == "sm_80,sm_90");
  CHECK(p.sha256 == "sha256:" + sha256_file_hex((dir.path / "p.whl").string()));
}

TEST_CASE("wheel zip: what a streaming reader would see and pip would not is refused, one line each") {
  const auto files = gpu_wheel_files(kVersionPy);
  // A version file saying CUDA 11.8 in front, which only the local headers list (libarchive's
  // streaming reader read it; pip installs the listed one).
  ZipFile hidden{"paddle/version/__init__.py", "cuda_version = '11.8'\n"};
  hidden.listed = false;
  CHECK(refusal(with(files, hidden, true)).find("unlisted bytes at offset 0") != std::string::npos);
  CHECK(refusal(with(files, hidden)).find("unlisted bytes") != std::string::npos);
  // A local header naming the version file where the directory lists another file.
  ZipFile renamed{"paddle/version/other.py", "cuda_version = '11.8'\n"};
  renamed.local_name = "paddle/version/__init__.py";
  CHECK(refusal(with(files, renamed)).find("found a local header naming 'paddle/version/__init__.py'") !=
        std::string::npos);
  // The directory's offset pointing into an entry rather than at its header.
  ZipFile shifted{"paddle/x.py", "x = 1\n"};
  shifted.offset_shift = 4;
  CHECK(refusal(with(files, shifted)).find("paddle/x.py: expected only entries the central directory lists") !=
        std::string::npos);
  // Local and central headers declaring different compression.
  ZipFile method{"paddle/y.py", "y = 1\n", true};
  method.local_method = 0;
  CHECK(refusal(with(files, method)).find("another method or flags") != std::string::npos);
  // Bytes in front of the first entry.
  CHECK(refusal(files, {}, "MZ stub").find("7 unlisted bytes at offset 0") != std::string::npos);
}

TEST_CASE("wheel zip: one file per name and per installed path; plain names only") {
  const auto files = gpu_wheel_files(kVersionPy);
  CHECK(refusal(with(files, {"paddle/version/__init__.py", "cuda_version = '11.8'\n"}))
            .find("paddle/version/__init__.py: expected each name once in the central directory, found it twice") !=
        std::string::npos);
  CHECK(refusal(with(files, {"paddlepaddle_gpu-3.3.1.data/platlib/paddle/version/__init__.py", "x = 1\n"}))
            .find("expected one file per installed path, found paddle/version/__init__.py twice") != std::string::npos);
  for (const std::string& name :
       std::vector<std::string>{"paddle/./version/__init__.py", "paddle//version/__init__.py", "paddle/libs/../x.py",
                                "/etc/passwd", std::string("paddle/version/__init__.py\0.txt", 31)}) {
    INFO(name);
    CHECK(refusal(with(files, {name, "x"})).find("expected a plain relative entry name") != std::string::npos);
  }
  CHECK(refusal(with(files, {"other-1.0.dist-info/METADATA", "Name: other\nVersion: 1.0\n"}))
            .find("expected one *.dist-info folder, found 2") != std::string::npos);
  // A version file only under .data/platlib/ is where pip installs it: read.
  auto moved = files;
  moved[0].name = "paddlepaddle_gpu-3.3.1.data/platlib/paddle/version/__init__.py";
  CHECK(read(moved).version_vars.at("cuda_version") == "12.6");
}

TEST_CASE("wheel zip: data that does not match its CRC or declared size is refused") {
  auto files = gpu_wheel_files(kVersionPy);
  files[1].deflate = false;
  std::string bad = zip_bytes(files);
  bad[bad.find(
      "\x7f"
      "ELF")] = 'X';  // a stored byte of the library changed
  CHECK_THROWS_WITH_AS(kb::read_wheel_bytes(bad, "w.whl"), doctest::Contains("CRC-32"), InputError);
}

TEST_CASE("wheel zip: past the inflate budget a wheel is refused before the entry is inflated") {
  auto files = gpu_wheel_files(kVersionPy);
  files.push_back({"paddle/libs/libbomb.so", std::string(4 << 20, '\0'), true});  // 4 MiB of zeros, ~4 KiB deflated
  std::string m = refusal(files, {.max_inflated = 1 << 20});
  CHECK(m.find("w.whl: paddle/libs/libbomb.so: expected at most 1048576 bytes to inflate from one wheel") !=
        std::string::npos);
  CHECK(refusal(files, {.max_inflated = 8 << 20}).empty());
  CHECK(kb::kMaxWheelInflated == 8ull << 30);
}

TEST_CASE("wheel version file: each version derive reads is one plain value, else one line naming field and value") {
  struct Case {
    std::string file, expect;  // expect: "" = read, else a part of the refusal
  };
  const Case cases[] = {
      {"cuda_version = '12.6\" injected: \"x'\n", "cuda_version: expected a plain version"},
      {"cuda_version = '12.6\x1b[2J\xe2\x80\xae'\n", "found '12.6\\x1b[2J\\u202e'"},
      {"cuda_version = '11.8'\ncuda_version = '12.6'\n", "cuda_version: expected one top-level line"},
      {"cuda_version = '11.8' if 0 else '12.6'\n", "found 'cuda_version = '11.8' if 0 else '12.6''"},
      {"cuda_version = '11.8'\nif 1: cuda_version = '12.6'\n", "2 assignments"},
      {"cuda_version = '11.8'\ncuda_version += '.1'\n", "2 assignments"},
      {"cuda_version = '11.8'\nx = cuda_version = '12.6'\n", "2 assignments"},
      {"cuda_version = '11.8'\nx, cuda_version = 1, '12.6'\n", "2 assignments"},
      {"cuda_version = '11.8'\ncuda_version: str = '12.6'\n", "2 assignments"},
      {"nccl_version = '2.21.5; rm'\n", "nccl_version: expected a plain version"},
      {"tensorrt_version = '..'\n", "tensorrt_version: expected a plain version"},
      {"cudnn_version = \"9.5.1\"  # a comment\ncuda_version = 'False'\nnccl_version = '0'\n", ""},
      {"cuda_version = 'None'\ntensorrt_version = None\n", ""},
      {"cuda_version     = '12.6'\ndef cuda():\n    return cuda_version\nprint('cuda:', cuda_version)\n"
       "print('cuda_version:', cuda_version == '12.6')\n",
       ""},
  };
  for (const auto& c : cases) {
    INFO(c.file);
    auto files = gpu_wheel_files(c.file);
    std::string m = refusal(files);
    if (c.expect.empty()) CHECK(m.empty());
    if (!c.expect.empty()) CHECK(m.rfind("w.whl: paddle/version/__init__.py: ", 0) == 0);
    if (!c.expect.empty()) CHECK(m.find(c.expect) != std::string::npos);
    CHECK(m.find('\x1b') == std::string::npos);
  }
}

TEST_CASE("kb derive YAML: quotes, newlines and YAML syntax in any string stay inside that string") {
  kb::DerivedRows d;
  d.gpu = true;
  d.wheel = "w.whl\nfake_key: 1";
  d.cuda = "12.6\"\nx: 1";
  d.compiled_archs = "sm_80'}: {";
  d.nvidia_requires = {"nvidia-a==1\" , evil: \"1", "- [x]"};
  d.source = "# not a comment";
  std::string y = kb::render_yaml(d);
  YAML::Node n = YAML::Load(y);
  REQUIRE(n.IsSequence());
  REQUIRE(n.size() == 1);
  std::vector<std::string> keys;
  for (const auto& kv : n[0]) keys.push_back(kv.first.as<std::string>());
  CHECK(keys ==
        std::vector<std::string>{"cuda", "compiled_archs", "pip_cuda_libraries", "nvidia_requires", "archs_source"});
  CHECK(n[0]["cuda"].as<std::string>() == d.cuda);
  CHECK(n[0]["compiled_archs"].as<std::string>() == d.compiled_archs);
  CHECK(n[0]["nvidia_requires"][0].as<std::string>() == d.nvidia_requires[0]);
  CHECK(n[0]["nvidia_requires"][1].as<std::string>() == d.nvidia_requires[1]);
  CHECK(n[0]["archs_source"].as<std::string>() == d.source);
  CHECK(y.find("\nfake_key") == std::string::npos);
  d.gpu = false;
  d.version = "1.0\", injected: \"x";
  YAML::Node cpu = YAML::Load(kb::render_yaml(d));
  CHECK(cpu.size() == 1);
  CHECK(cpu["cpu_wheel"].size() == 3);
  CHECK(cpu["cpu_wheel"]["version"].as<std::string>() == d.version);
}

TEST_CASE("kb derive: every wheel string reaches YAML and JSON through printable()") {
  auto files = gpu_wheel_files(kVersionPy);
  files[2].data =
      "Name: paddle\x1b[31m\xe2\x80\xae-gpu\nVersion: 3.3.1\xe2\x80\x8b\nRequires-Dist: nvidia-x==1\x07\n\n";
  files.push_back({"paddle/libs/lib\x1b]0;t\x07.so", files[1].data});
  kb::DerivedRows d = kb::derive(read(files));
  CHECK(d.package == "paddle\\x1b[31m\\u202e-gpu");
  CHECK(d.version == "3.3.1\\u200b");
  CHECK(d.nvidia_requires == std::vector<std::string>{"nvidia-x==1\\x07"});
  CHECK(d.archs_by_library.count("paddle/libs/lib\\x1b]0;t\\x07.so") == 1);
  for (const std::string& out : {kb::render_yaml(d), kb::to_json(d).dump()}) {
    CHECK(out.find('\x1b') == std::string::npos);
    CHECK(out.find('\x07') == std::string::npos);
    CHECK(out.find("\xe2\x80\xae") == std::string::npos);
    CHECK(out.find("\xe2\x80\x8b") == std::string::npos);
  }
}

// Issue 32 section 1: the names the framework's libraries hold, held against the KB's load table.
TEST_CASE("kb derive: the dlopen names of libphi are read and cross-checked with the KB's load table") {
  auto files = gpu_wheel_files(kVersionPy);
  std::string rodata = std::string("\0libcublas.so.12\0libnvrtc.so\0libnccl.so;libnccl.so.2\0", 53);
  files[1].data += rodata;  // paddle/libs/libphi_gpu.so: its strings
  files.push_back({"paddle/libs/libthird_party.so", std::string("\0libcufft.so.99\0", 16), true});
  files[2].data =
      "Metadata-Version: 2.1\nName: paddlepaddle-gpu\nVersion: 3.3.1\n"
      "Requires-Dist: nvidia-cublas-cu12==12.6.4.1; platform_system == 'Linux'\n\nbody\n";
  kb::DerivedRows d = kb::derive(read(files));
  CHECK(d.dlopen_names == std::vector<std::string>{"libcublas.so.12", "libnccl.so", "libnccl.so.2", "libnvrtc.so"});
  kb::cross_check_loads(d, matrix::KnowledgeBase::load_default());
  std::string all;
  for (const auto& w : d.warnings) all += w + "\n";
  INFO(all);
  // The table's names this wheel does not hold are named, with what it holds instead.
  CHECK(all.find("the KB says Paddle 3.3.1 dlopens libcudnn.so.9 (cudnn), and its libraries hold no such string "
                 "(they hold none)") != std::string::npos);
  CHECK(all.find("dlopens libcublas.so.12") == std::string::npos);  // held
  CHECK(all.find("dlopens libnvrtc.so ") == std::string::npos);
  CHECK(all.find("libcufft.so.99") == std::string::npos);  // a third-party library's strings are not Paddle's
  CHECK(kb::to_json(d)["dlopen_names"].size() == 4);
}
