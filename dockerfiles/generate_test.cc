#include "dockerfiles/generate.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/process.h"
#include "dockerfiles/cell_file.h"
#include "dockerfiles/cell_values.h"
#include "dockerfiles/lint.h"
#include "dockerfiles/stages.h"
#include "dockerfiles/test_cells.h"
#include "dockerfiles/test_util.h"
#include "matrix/labels.h"
#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::dockerfiles;
using namespace imgtool::dockerfiles::testing;
namespace fs = std::filesystem;

namespace {

const char* kKb = "kb-test-1";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A small fake wheelhouse (real wheels are for the integration test).
fs::path make_wheelhouse(const fs::path& dir, const std::string& numpy_bytes = "numpy wheel") {
  write_file_atomic(dir / "paddlepaddle-3.3.1-cp311-cp311-manylinux1_x86_64.whl", "paddle wheel");
  write_file_atomic(dir / "numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl", numpy_bytes);
  write_file_atomic(dir / "requirements.txt", "paddlepaddle==3.3.1\n");  // not a wheel: not copied
  return dir;
}

std::vector<matrix::Cell> sample_cells(const fs::path& wheels) {
  return {gpu_cell(), trt_cell(), cpu_cell(wheels.string(), "imgtool-base/debian:bookworm-py3")};
}

// Copies the shipped templates so a test may edit them.
fs::path copy_templates(const fs::path& to) {
  fs::copy(fs::path(imgtool::testing::source_dir()) / "dockerfiles", to, fs::copy_options::recursive);
  return to;
}

std::string hash_of(const matrix::Cell& c, const fs::path& templates = {}, const std::string& kb = kKb) {
  TemplateDir t(templates.empty() ? fs::path(imgtool::testing::source_dir()) / "dockerfiles" : templates);
  return render_cell(c, t, kb).inputs_hash;
}

}  // namespace

TEST_CASE("generate writes one folder per cell with Dockerfile, cell.json and context files") {
  imgtool::testing::ScratchDir d("gen");
  auto cells = sample_cells(make_wheelhouse(d.path / "wh"));
  auto out = generate(cells, {d.path / "out", "", kKb});
  REQUIRE(out.size() == 3);
  for (auto& c : cells) {
    fs::path dir = d.path / "out" / c.tag;
    REQUIRE(fs::exists(dir / "Dockerfile"));
    auto j = nlohmann::json::parse(read_file(dir / "cell.json"));
    CHECK(j.at("cell").get<matrix::Cell>().tag == c.tag);
    CHECK(j.at("cell").get<matrix::Cell>().pip_requirement == c.pip_requirement);
    CHECK(j.at("kb_version") == kKb);
    std::string hash = j.at("inputs_hash");
    CHECK(hash == sha256_digest(read_file(dir / "inputs.txt")));
    std::string df = read_file(dir / "Dockerfile");
    CHECK(contains(
        df, " \\\n      io.imgtool.inputs-hash=\"" + hash + "\" io.imgtool.stage-key=\""));  // the LABEL's last line
    CHECK(contains(df, "io.imgtool.paddle=\"" + c.paddle + "\""));
    CHECK(contains(df, "io.imgtool.tag=\"" + c.tag + "\""));
    CHECK(contains(df, "io.imgtool.kb-version=\"" + std::string(kKb) + "\""));
    CHECK(contains(df, "org.opencontainers.image.version=\"" + c.tag + "\""));
    CHECK(contains(df, "USER paddle\n"));
    CHECK(contains(df, "--no-install-recommends"));
    CHECK(contains(df, "rm -rf /var/lib/apt/lists/*"));
    CHECK(contains(df, "pip install --no-cache-dir"));
    if (c.wheelhouse.empty()) {  // from an index: by version
      CHECK(contains(df, "\"" + c.pip_requirement + "\""));
      // A pinned pip is installed before the first `pip install` of anything else.
      REQUIRE(contains(df, "\"pip==24.3.1\""));
      CHECK(df.find("\"pip==24.3.1\"") < df.find("\"" + c.pip_requirement + "\""));
    } else {  // from the wheelhouse: by hash, the lock's pip line first
      REQUIRE(contains(df, "grep '^pip==24.3.1 ' /tmp/requirements.lock > /tmp/pip.lock"));
      CHECK(df.find("-r /tmp/pip.lock") < df.find("-r /tmp/requirements.lock"));
    }
    CHECK_FALSE(contains(df, "{{"));
    CHECK_FALSE(contains(df, d.path.string()));  // no host path: the same output on every machine
  }
  CHECK(fs::exists(d.path / "out/.imgtool-generated"));
}

TEST_CASE(
    "a Paddle 2.6 cell on a runtime image: the claimed cuDNN from NVIDIA's apt repository, the dev links Paddle "
    "dlopens, its archs and Paddle's driver floor") {
  imgtool::testing::ScratchDir d("gen-apt");
  matrix::Cell c = gpu_cell();
  c.tag = "2.6.2-gpu-cuda11.2-cudnn8.2";
  c.paddle = "2.6.2";
  c.cuda = "11.2";
  c.cudnn = "8.2";
  c.min_driver = "450.80.02";
  c.min_driver_paddle = "470.82.01";  // stricter: it decides the label and NVIDIA_REQUIRE_CUDA
  c.base_image = "nvidia/cuda:11.2.2-runtime-ubuntu20.04";
  c.pip_requirement = "paddlepaddle-gpu==2.6.2.post112";
  c.cudnn_package = "libcudnn8=8.2.1.32-1+cuda11.3";
  c.cuda_archs = "sm_61,sm_70,sm_75,sm_80,sm_86";
  c.dynload_links = {"libcublas.so=libcublas.so.11", "libcudnn.so=libcudnn.so.8",
                     "libcupti.so=libcupti.so.11.8:optional"};
  generate({c}, {d.path / "out", "", kKb});
  std::string df = read_file(d.path / "out" / c.tag / "Dockerfile");
  CHECK(contains(df,
                 "apt-get install -y --no-install-recommends libcudnn8=8.2.1.32-1+cuda11.3 && \\\n    apt-mark hold "
                 "libcudnn8 && \\\n"));
  CHECK(contains(
      df,
      "for pair in libcublas.so=libcublas.so.11 libcudnn.so=libcudnn.so.8 libcupti.so=libcupti.so.11.8:optional; do"));
  CHECK(contains(df, "/etc/ld.so.conf.d/zz-paddle-dynload.conf"));
  CHECK(df.find("apt-mark hold") < df.find("COPY --from=build /opt/venv"));  // as root, before USER
  CHECK(contains(df, "io.imgtool.cuda-archs=\"sm_61,sm_70,sm_75,sm_80,sm_86\""));
  CHECK(contains(df, "io.imgtool.min-driver=\"470.82.01\""));
  CHECK(contains(df, "    NVIDIA_REQUIRE_CUDA=\"cuda>=11.2 driver>=470.82.01\" \\\n"));
  // The generated Dockerfile passes the lint and BuildKit's parser like every other.
  CHECK(lint_text(df, "Dockerfile").empty());
  // A Paddle 3.x cell (its wheel brings CUDA) gets neither.
  std::string gpu3 = read_file([&] {
    generate({gpu_cell()}, {d.path / "out3", "", kKb});
    return d.path / "out3" / gpu_cell().tag / "Dockerfile";
  }());
  CHECK_FALSE(contains(gpu3, "apt-mark hold"));
  CHECK_FALSE(contains(gpu3, "paddle-dynload"));
}

TEST_CASE("gpu images claim CUDA and the driver floor; cpu images claim none") {
  imgtool::testing::ScratchDir d("gen-gpu");
  auto cells = sample_cells(make_wheelhouse(d.path / "wh"));
  generate(cells, {d.path / "out", "", kKb});
  std::string gpu = read_file(d.path / "out" / cells[0].tag / "Dockerfile");
  CHECK(contains(gpu,
                 "FROM nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04@sha256:" + std::string(64, 'a') + " AS build\n"));
  CHECK(contains(gpu, "    NVIDIA_REQUIRE_CUDA=\"cuda>=12.6 driver>=525.60.13\" \\\n"));
  CHECK(contains(gpu, "    NVIDIA_DRIVER_CAPABILITIES=compute,utility \\\n"));  // the runtime mounts libcuda.so
  // One ENV and one RUN in the final stage, one LABEL with the hash as its last line: each
  // instruction of the classic builder is a container created and committed.
  std::string final_stage = gpu.substr(gpu.rfind("\nFROM "));
  for (const char* instruction : {"\nENV ", "\nRUN ", "\nLABEL "}) {
    size_t first = final_stage.find(instruction);
    CHECK_MESSAGE((first != std::string::npos && final_stage.find(instruction, first + 1) == std::string::npos),
                  instruction);
  }
  CHECK(contains(gpu, "io.imgtool.cuda=\"12.6\""));
  CHECK(contains(gpu, "io.imgtool.cudnn=\"9.5\""));
  CHECK(contains(gpu, "io.imgtool.min-driver=\"525.60.13\""));
  CHECK(contains(gpu, "org.opencontainers.image.base.digest=\"sha256:"));
  CHECK_FALSE(contains(gpu, "io.imgtool.tensorrt"));  // empty claim omitted
  CHECK(contains(gpu, "--index-url \"https://www.paddlepaddle.org.cn/packages/stable/cu126/\""));
  std::string trt = read_file(d.path / "out" / cells[1].tag / "Dockerfile");
  CHECK(contains(trt, "io.imgtool.tensorrt=\"10.5\""));
  CHECK(contains(trt, "io.imgtool.flavor=\"devel\""));
  CHECK_FALSE(contains(trt, "org.opencontainers.image.base.digest"));
  std::string cpu = read_file(d.path / "out" / cells[2].tag / "Dockerfile");
  CHECK_FALSE(contains(cpu, "NVIDIA_REQUIRE_CUDA"));
  CHECK_FALSE(contains(cpu, "io.imgtool.cuda"));
  CHECK(contains(cpu, "io.imgtool.variant=\"cpu\""));
  CHECK(contains(cpu, "--no-index --find-links /tmp/wheels --require-hashes -r /tmp/requirements.lock"));
  CHECK(contains(cpu, "COPY requirements.lock /tmp/requirements.lock"));
  CHECK_FALSE(contains(cpu, "--index-url"));
  // The lock names every wheel of the wheelhouse by version and sha256; the inputs hash covers it.
  std::string lock = read_file(d.path / "out" / cells[2].tag / "requirements.lock");
  CHECK(lock == "numpy==2.4.6 --hash=sha256:" + sha256_hex("numpy wheel") +
                    "\npaddlepaddle==3.3.1 --hash=sha256:" + sha256_hex("paddle wheel") + "\n");
  CHECK(contains(read_file(d.path / "out" / cells[2].tag / "inputs.txt"),
                 "lock requirements.lock " + sha256_digest(lock) + "\n"));
  CHECK_FALSE(fs::exists(d.path / "out" / cells[0].tag / "requirements.lock"));  // an index cell has none
}

TEST_CASE("the hash lock: names as PEP 503 has them, one line per project, two versions refused") {
  auto file = [](const std::string& name, const std::string& hex) {
    return ContextFile{"/wh/" + name, "wheels/" + name, "sha256:" + hex};
  };
  std::vector<ContextFile> wheels{file("PyYAML-6.0.2-cp311-cp311-manylinux_2_17_x86_64.whl", "bb"),
                                  file("nvidia_cuda_nvrtc_cu12-12.6.77-py3-none-manylinux2014_x86_64.whl", "cc"),
                                  file("nvidia_cuda_nvrtc_cu12-12.6.77-py3-none-manylinux_2_28_x86_64.whl", "aa")};
  matrix::Cell c;
  c.tag = "t";
  c.pip_requirement = "paddlepaddle-gpu==3.1.1";
  wheels.push_back(file("paddlepaddle_gpu-3.1.1-cp311-cp311-manylinux1_x86_64.whl", "01"));
  wheels.push_back(file("paddlepaddle_gpu-3.2.0-cp311-cp311-manylinux1_x86_64.whl", "02"));  // another cell's
  CHECK(wheel_lock(wheels, c) ==
        "nvidia-cuda-nvrtc-cu12==12.6.77 --hash=sha256:aa --hash=sha256:cc\npaddlepaddle-gpu==3.1.1 "
        "--hash=sha256:01\npyyaml==6.0.2 --hash=sha256:bb\n");
  wheels.push_back(file("pyyaml-6.0.1-cp311-cp311-manylinux_2_17_x86_64.whl", "dd"));
  CHECK_THROWS_WITH_AS(wheel_lock(wheels, c),
                       "cell t: the wheelhouse holds pyyaml 6.0.2 and 6.0.1; a hash lock pins one version "
                       "(remove the other wheel)",
                       InputError);
  CHECK_THROWS_WITH_AS(wheel_lock({file("numpy.whl", "ee")}, c),
                       "cell t: 'numpy.whl' is no wheel file name (expected NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl)",
                       InputError);
}

TEST_CASE("TensorRT is installed only when a cell names a pinned pip requirement for it") {
  TemplateDir t(fs::path(imgtool::testing::source_dir()) / "dockerfiles");
  auto c = trt_cell();
  CHECK_FALSE(contains(render_cell(c, t, kKb).dockerfile, "\"tensorrt"));
  c.overrides["trt_pip_requirement"] = "tensorrt-cu12==10.5.0";
  auto r = render_cell(c, t, kKb);
  CHECK(contains(r.dockerfile, "--index-url \"https://pypi.org/simple\" \"tensorrt-cu12==10.5.0\"\n"));
  CHECK(r.inputs_hash != render_cell(trt_cell(), t, kKb).inputs_hash);
}

TEST_CASE("the KB's released day is the cell's SOURCE_DATE_EPOCH: the final stage's clock and a label") {
  TemplateDir t(fs::path(imgtool::testing::source_dir()) / "dockerfiles");
  auto c = trt_cell();
  auto r = render_cell(c, t, kKb, "2026-01-01");
  CHECK(contains(r.dockerfile, "\nARG SOURCE_DATE_EPOCH=1767225600\n"));
  CHECK(contains(r.dockerfile, "io.imgtool.source-date-epoch=\"1767225600\""));
  // only after the final FROM: the build stage's pip keeps timestamp .pyc files (fast imports; a
  // reproducible copy clamps them, image/normalize.h)
  CHECK(r.dockerfile.find("ARG SOURCE_DATE_EPOCH") > r.dockerfile.rfind("\nFROM "));
  CHECK(r.inputs_hash != render_cell(c, t, kKb, "2026-01-02").inputs_hash);
  CHECK_FALSE(contains(render_cell(c, t, kKb).dockerfile, "SOURCE_DATE_EPOCH"));  // no day, no clock
  CHECK_THROWS_AS(render_cell(c, t, kKb, "2026-1-1"), InputError);
}

TEST_CASE("the inputs hash is over the Dockerfile without its own label") {
  imgtool::testing::ScratchDir d("gen-strip");
  TemplateDir t(fs::path(imgtool::testing::source_dir()) / "dockerfiles");
  auto r = render_cell(gpu_cell(), t, kKb);
  std::string stripped = strip_inputs_hash_label(r.dockerfile);
  CHECK(stripped.size() < r.dockerfile.size());
  CHECK_FALSE(contains(stripped, "inputs-hash"));
  CHECK(contains(r.inputs_manifest, "dockerfile " + sha256_digest(stripped) + "\n"));
}

TEST_CASE("generation is deterministic: same inputs, byte-identical folders") {
  imgtool::testing::ScratchDir d("gen-det");
  auto cells = sample_cells(make_wheelhouse(d.path / "wh"));
  generate(cells, {d.path / "a", "", kKb});
  generate(cells, {d.path / "b", "", kKb});
  auto a = snapshot(d.path / "a"), b = snapshot(d.path / "b");
  CHECK(a.size() == 3 * 4 + 1 + 2 + 1);  // Dockerfile, cell.json, inputs.txt, identity.json per cell; the
                                         // offline cell's requirements.lock and 2 wheels; marker
  CHECK(a == b);
  generate(cells, {d.path / "a", "", kKb});  // regenerate in place: replaced, same bytes
  CHECK(snapshot(d.path / "a") == b);
}

TEST_CASE("the inputs hash changes with template, base, pins, wheels and KB version") {
  imgtool::testing::ScratchDir d("gen-hash");
  auto wh = make_wheelhouse(d.path / "wh");
  auto cpu = cpu_cell(wh.string(), "imgtool-base/debian:bookworm-py3");
  auto gpu = gpu_cell();
  const std::string h_cpu = hash_of(cpu), h_gpu = hash_of(gpu);
  CHECK(h_cpu != h_gpu);
  CHECK(hash_of(cpu) == h_cpu);

  auto g = gpu;
  g.base_digest = "sha256:" + std::string(64, 'b');
  CHECK(hash_of(g) != h_gpu);
  g = gpu;
  g.base_image = "nvidia/cuda:12.6.2-cudnn-runtime-ubuntu22.04";
  CHECK(hash_of(g) != h_gpu);
  g = gpu;
  g.pip_requirement = "paddlepaddle-gpu==3.1.1";
  CHECK(hash_of(g) != h_gpu);
  g = gpu;
  g.pip_index_url = "https://www.paddlepaddle.org.cn/packages/stable/cu118/";
  CHECK(hash_of(g) != h_gpu);
  CHECK(hash_of(gpu, {}, "kb-test-2") != h_gpu);

  write_file_atomic(wh / "numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl", "numpy wheel, rebuilt");
  CHECK(hash_of(cpu) != h_cpu);  // same file names, different wheel contents

  auto t = copy_templates(d.path / "tmpl");
  CHECK(hash_of(gpu, t) == h_gpu);
  write_file_atomic(t / "partials/install-runtime.Dockerfile.in",
                    read_file(t / "partials/install-runtime.Dockerfile.in") + "{{! an edited comment }}\n");
  CHECK(hash_of(gpu, t) != h_gpu);  // template bytes count even when the output does not change
}

TEST_CASE("the stage key: the same first stage over the same wheels is one group, over other wheels another") {
  imgtool::testing::ScratchDir d("gen-stage-key");
  TemplateDir t(fs::path(imgtool::testing::source_dir()) / "dockerfiles");
  auto key = [&](const fs::path& wh) {
    return render_cell(cpu_cell(wh.string(), "imgtool-base/debian:bookworm-py3"), t, kKb).file.build.stage_key;
  };
  auto a = make_wheelhouse(d.path / "a"), same = make_wheelhouse(d.path / "same");
  auto other = make_wheelhouse(d.path / "other", "numpy wheel, another build");
  CHECK(key(a).size() == 12);
  CHECK(key(a) == key(same));   // other folder, same files
  CHECK(key(a) != key(other));  // the same Dockerfile text copies other wheels
}

TEST_CASE("a failing cell leaves no output folder, and an older output stays intact") {
  imgtool::testing::ScratchDir d("gen-stage");
  auto cells = sample_cells(make_wheelhouse(d.path / "wh"));
  auto bad = cells;
  bad[2].pip_requirement = "paddlepaddle>=3.0";  // not pinned
  auto msg = error_of([&] { generate(bad, {d.path / "out", "", kKb}); });
  CHECK(msg ==
        "cell 3.3.1: pip_requirement 'paddlepaddle>=3.0' is not pinned; expected name==version "
        "(e.g. paddlepaddle-gpu==3.1.0)");
  CHECK_FALSE(fs::exists(d.path / "out"));
  CHECK(fs::is_empty(d.path) == false);
  for (auto& e : fs::directory_iterator(d.path)) CHECK(e.path().filename().string() == "wh");  // no staging left

  generate(cells, {d.path / "out", "", kKb});
  auto before = snapshot(d.path / "out");
  bad = cells;
  bad[1].overrides["extra"] = "$(curl evil)";
  msg = error_of([&] { generate(bad, {d.path / "out", "", kKb}); });
  CHECK(contains(msg, "extra '$(curl evil)' has a character that is unsafe"));
  CHECK(snapshot(d.path / "out") == before);
}

TEST_CASE("bad input is one clear InputError") {
  imgtool::testing::ScratchDir d("gen-bad");
  auto wh = make_wheelhouse(d.path / "wh");
  auto cells = sample_cells(wh);
  auto dup = cells;
  dup[1].tag = dup[0].tag;
  CHECK(error_of([&] {
          generate(dup, {d.path / "o1", "", kKb});
        }) == "two cells have the same tag '3.1.0-gpu-cuda12.6-cudnn9.5'");
  CHECK(error_of([&] { generate({}, {d.path / "o1", "", kKb}); }).find("no cells") == 0);
  write_file_atomic(d.path / "mine/notes.txt", "precious");
  CHECK(contains(error_of([&] { generate(cells, {d.path / "mine", "", kKb}); }), "was not made by imgtool generate"));
  CHECK(read_file(d.path / "mine/notes.txt") == "precious");
  auto c = cells[0];
  c.variant = "tpu";
  CHECK(error_of([&] {
          generate({c}, {d.path / "o1", "", kKb});
        }) == "cell 3.1.0-gpu-cuda12.6-cudnn9.5: variant 'tpu': expected gpu or cpu");
  c = cells[0];
  c.pip_index_url = "http://mirror.example/simple";
  CHECK(contains(error_of([&] { generate({c}, {d.path / "o1", "", kKb}); }), "expected an https:// URL"));
  c = cells[0];
  c.pip_index_url = "https://builder:hunter2@mirror.example/simple";
  std::string creds = error_of([&] { generate({c}, {d.path / "o1", "", kKb}); });
  CHECK(contains(creds, "pip_index_url: expected an index URL without user:password@"));
  CHECK(contains(creds, "BuildKit secret"));
  CHECK_FALSE(contains(creds, "hunter2"));  // never echoed
  c = cells[0];
  c.overrides["trt_pip_index_url"] = "https://tok@pypi.example/simple";
  CHECK(contains(error_of([&] { generate({c}, {d.path / "o1", "", kKb}); }), "trt_pip_index_url: expected"));
  c = cells[0];
  c.tag = "../evil";
  CHECK(contains(error_of([&] { generate({c}, {d.path / "o1", "", kKb}); }), "expected a Docker tag"));
  c = cells[2];
  c.pip_requirement = "paddlepaddle==3.1.0";
  CHECK(contains(error_of([&] {
                   generate({c}, {d.path / "o1", "", kKb});
                 }),
                 "has no wheel for 'paddlepaddle==3.1.0' (expected a file 'paddlepaddle-3.1.0-*.whl')"));
  c = cells[0];
  c.template_name = "nope";
  CHECK(error_of([&] {
          generate({c}, {d.path / "o1", "", kKb});
        }).find("dockerfiles/nope.Dockerfile.in: template file not found") == 0);
  CHECK_FALSE(fs::exists(d.path / "o1"));
}

TEST_CASE("template errors and lint findings fail generation with file:line") {
  imgtool::testing::ScratchDir d("gen-lint");
  auto t = copy_templates(d.path / "tmpl");
  std::string orig = read_file(t / "paddle.Dockerfile.in");
  write_file_atomic(t / "paddle.Dockerfile.in", orig + "RUN echo {{paddle_version}}\n");
  int line = static_cast<int>(std::count(orig.begin(), orig.end(), '\n')) + 1;
  CHECK(error_of([&] {
          generate({gpu_cell()}, {d.path / "out", t, kKb});
        })
            .find("dockerfiles/paddle.Dockerfile.in:" + std::to_string(line) +
                  ": unknown placeholder {{paddle_version}}") == 0);
  write_file_atomic(
      t / "paddle.Dockerfile.in",
      orig + "RUN curl -fsSL https://example.com/x.sh | bash\nRUN wget --no-check-certificate https://e/y\n");
  auto msg = error_of([&] { generate({gpu_cell()}, {d.path / "out", t, kKb}); });
  CHECK(msg ==
        "template lint failed (download without verification):\n"
        "dockerfiles/paddle.Dockerfile.in:" +
            std::to_string(line) +
            ": a download is piped into a shell unchecked; save it, verify with sha256sum -c, then run it "
            "[pipe-to-shell]\n"
            "dockerfiles/paddle.Dockerfile.in:" +
            std::to_string(line + 1) +
            ": --no-check-certificate disables TLS verification; remove it [wget-no-check-certificate]");
  CHECK_FALSE(fs::exists(d.path / "out"));
}

TEST_CASE("wheels are hard-linked into the context when on the same filesystem") {
  imgtool::testing::ScratchDir d("gen-link");
  auto wh = make_wheelhouse(d.path / "wh");
  auto out = generate({cpu_cell(wh.string(), "b")}, {d.path / "out", "", kKb});
  REQUIRE(out.size() == 1);
  CHECK(out[0].context_files == 2);
  CHECK(out[0].hard_linked == 2);
  auto w = d.path / "out/3.3.1/wheels/paddlepaddle-3.3.1-cp311-cp311-manylinux1_x86_64.whl";
  CHECK(fs::hard_link_count(w) == 2);
  CHECK(read_file(w) == "paddle wheel");
  CHECK_FALSE(fs::exists(d.path / "out/3.3.1/wheels/requirements.txt"));
}

TEST_CASE("generated Dockerfiles pass BuildKit's parser (PyPI dockerfile)") {
  imgtool::testing::ScratchDir d("gen-parse");
  generate(sample_cells(make_wheelhouse(d.path / "wh")), {d.path / "out", "", kKb});
  std::string script = imgtool::testing::source_dir() + "/dockerfiles/check_dockerfiles.py";
  auto r = run({"python3", script, (d.path / "out").string()});
  INFO(r.out, r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "ok 3"));
  // The checker is real: a broken Dockerfile fails it.
  write_file_atomic(d.path / "bad/Dockerfile", "FROM x\nRUN echo a \\\n");
  write_file_atomic(d.path / "bad2/Dockerfile", "RUN echo before from\nFROM x\nFRUM y\n");
  r = run({"python3", script, (d.path / "bad").string(), (d.path / "bad2").string()});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out, "first instruction is run, expected FROM"));
  CHECK(contains(r.out, "unknown instruction FRUM"));
}

TEST_CASE("labels.tsv names only io.imgtool.* labels of the one label header, and every claim") {
  std::string tsv = read_file(fs::path(imgtool::testing::source_dir()) / "dockerfiles" / "labels.tsv");
  std::set<std::string> keys;
  std::istringstream in(tsv);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(std::string(labels::kPrefix), 0) == 0) keys.insert(line.substr(0, line.find('\t')));
  for (auto& k : keys) {
    INFO(k);
    CHECK(std::find_if(labels::kAll.begin(), labels::kAll.end(), [&](const char* l) { return k == l; }) !=
          labels::kAll.end());
  }
  for (const char* claim : labels::kClaims) CHECK(keys.count(claim) == 1);
}

// std::regex recursed once per character: a 200 KB pip_requirement crashed generate (SIGSEGV).
TEST_CASE("long matrix values are checked in linear time and shown shortened") {
  imgtool::testing::ScratchDir d("gen-long");
  auto c = sample_cells(make_wheelhouse(d.path / "wh"))[2];
  c.pip_requirement = "paddlepaddle==3" + std::string(200000, 'a');  // pinned, just long
  CHECK_NOTHROW(cell_values(c, kKb));
  c.pip_requirement = "paddlepaddle" + std::string(200000, 'a') + ">=3";
  std::string msg = error_of([&] { cell_values(c, kKb); });
  CHECK(contains(msg, "pip_requirement 'paddlepaddleaaaa"));
  CHECK(contains(msg, "…' (200015 bytes) is not pinned"));
  CHECK(msg.size() < 300);
  msg = error_of([&] { generate({c}, {d.path / "out", "", kKb}); });
  CHECK(contains(msg, "'paddlepaddleaaaa"));
  CHECK(msg.size() < 400);
  c.pip_requirement = "paddlepaddle==3.2.0";
  c.tag = std::string(200000, 'x');
  msg = error_of([&] { cell_values(c, kKb); });
  CHECK(contains(msg, "(200000 bytes): expected a Docker tag"));
  CHECK(msg.size() < 300);
}

// The written-out matchers accept exactly what the regular expressions they replace accepted.
TEST_CASE("pinned requirements and tags: the same answers as the old regular expressions") {
  const std::regex pinned(R"([A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?==[0-9][A-Za-z0-9.+!-]*)");
  const std::regex tag(R"([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})");
  imgtool::testing::ScratchDir d("gen-oracle");
  auto base = sample_cells(make_wheelhouse(d.path / "wh"))[2];
  const std::vector<std::string> parts{"a", "Z", "0", "9",  ".", "_",  "-", "+", "!",
                                       ",", "[", "]", "==", "=", "x1", "@", "~"};
  const std::vector<std::string> names{"paddle", "a", "Z0", "x-y", "p.q_r", "-a", "_a", "", "a@b"},
      extras{"", "", "[a]", "[a,b.c-_]", "[]", "[a", "a]", "[a]]"}, equals{"==", "==", "=", "", "==="},
      versions{"3.2.0", "1", "9a+b!-", "", "x1", "3.2.0~1", "0.", "1_2"};
  std::mt19937 rng(7);
  auto pick = [&](const std::vector<std::string>& from) { return from[rng() % from.size()]; };
  auto random_text = [&](size_t max_parts) {
    std::string s;
    for (size_t n = rng() % (max_parts + 1); n > 0; --n) s += parts[rng() % parts.size()];
    return s;
  };
  auto refused = [&](matrix::Cell c, const std::string& what) {
    try {
      cell_values(c, kKb);
      return false;
    } catch (const InputError& e) {
      return std::string(e.what()).find(what) != std::string::npos;
    }
  };
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    auto c = base;
    c.pip_requirement = i % 2 ? random_text(8) : pick(names) + pick(extras) + pick(equals) + pick(versions);
    bool ok = std::regex_match(c.pip_requirement, pinned);
    accepted += ok;
    CHECK_MESSAGE(refused(c, "is not pinned") == !ok, c.pip_requirement);
    c = base;
    c.tag = i % 50 == 0 ? std::string(120 + i % 17, 'a') : random_text(6);
    CHECK_MESSAGE(refused(c, "expected a Docker tag") == !std::regex_match(c.tag, tag), c.tag);
  }
  CHECK(accepted > 100);  // the inputs reach both answers
}

TEST_CASE("cell.json lists every label the Dockerfile sets, the inputs hash and group key included") {
  TemplateDir t(fs::path(imgtool::testing::source_dir()) / "dockerfiles");
  RenderedCell r = render_cell(gpu_cell(), t, kKb);
  auto f = nlohmann::json::parse(r.cell_json).get<CellFile>();
  REQUIRE(f.labels.size() > 10);
  for (auto& kv : f.labels)  // each one, with its value, is in the Dockerfile's last stage
    CHECK_MESSAGE(r.dockerfile.substr(r.dockerfile.rfind("\nFROM ")).find(kv.first + "=\"" + kv.second + "\"") !=
                      std::string::npos,
                  kv.first);
  CHECK(f.labels.at("io.imgtool.inputs-hash") == r.inputs_hash);
  CHECK(f.labels.at("io.imgtool.stage-key") == group_key(f.build, f.cell));
  CHECK(f.labels.at("io.imgtool.tag") == f.cell.tag);
  CHECK(f.labels.at("io.imgtool.kb-version") == kKb);
  // The reader and the writer are one struct: a round trip changes nothing.
  CHECK(nlohmann::json(f).dump(2) + "\n" == r.cell_json);
}

TEST_CASE("every image carries its identity: /etc/imgtool/identity.json = its tag and claims, hashed as an input") {
  TemplateDir t(imgtool::testing::source_dir() + "/dockerfiles");
  auto r = render_cell(gpu_cell(), t, kKb);
  auto id = nlohmann::json::parse(r.identity_json);
  CHECK(id["tag"] == gpu_cell().tag);
  CHECK(id["kb_version"] == kKb);
  CHECK(id["claims"]["paddle"] == gpu_cell().paddle);
  CHECK(id["claims"]["variant"] == "gpu");
  CHECK(id["claims"]["cuda"] == gpu_cell().cuda);
  CHECK(contains(r.dockerfile, "COPY identity.json /etc/imgtool/identity.json\n"));
  CHECK(contains(r.inputs_manifest, "identity " + sha256_digest(r.identity_json) + "\n"));
  // The claims are the labels' own (one reading: matrix::read_label_claims), so binding compares like with like.
  auto cell = nlohmann::json::parse(r.cell_json);
  CHECK(id["claims"]["python"] == cell["labels"]["io.imgtool.python"]);
}
