// The loader rows (loader_rows.h) on crafted tar layers.
#include "verify/loader_rows.h"

#include <doctest/doctest.h>

#include "image/blob.h"
#include "scan/contents_facts.h"
#include "scan/contents_tree.h"
#include "scan/loader.h"
#include "scan/testing/elf.h"
#include "scan/testing/layers.h"
#include "verify/claims_model.h"

using namespace imgtool;
using namespace imgtool::verify;
using namespace imgtool::scan::testing;

namespace {
scan::ContentsTree tree_of(const std::vector<TarItem>& items) {
  scan::ContentsTree t(
      [](const std::string& p, int64_t n) { return scan::keep_for_facts(p, n) || scan::keep_for_loader(p, n); });
  image::StringReader r(make_tar(items));
  t.add_layer(r, "test layer");
  return t;
}
const CheckResult* row(const std::vector<CheckResult>& rows, const std::string& id) {
  for (const auto& r : rows)
    if (r.id == id) return &r;
  return nullptr;
}
// The layout scripts/make-cuda-base.sh gives: wheel files under redist/, links in targets/.../lib.
std::vector<TarItem> cuda_base(bool with_conf) {
  std::string d = "usr/local/cuda-11.8/", lib = d + "targets/x86_64-linux/lib/";
  std::vector<TarItem> items = {
      {d + "redist/nvidia/cuda_runtime/lib/libcudart.so.11.0", "x"},
      {d + "redist/nvidia/cudnn/lib/libcudnn.so.8", "x"},
      {lib + "libcudart.so.11.0", "../../../redist/nvidia/cuda_runtime/lib/libcudart.so.11.0", 'l'},
      {lib + "libcudnn.so.8", "../../../redist/nvidia/cudnn/lib/libcudnn.so.8", 'l'},
      {lib + "libcudnn.so", "libcudnn.so.8", 'l'},
      {d + "lib64", "targets/x86_64-linux/lib", 'l'},
      {"usr/local/cuda", "cuda-11.8", 'l'},
      {"etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n"},
      {"etc/ld.so.conf.d/libc.conf", "# libc default\n/usr/local/lib\n"}};
  if (with_conf)
    items.push_back(
        {"etc/ld.so.conf.d/000_cuda.conf", "/usr/local/cuda/targets/x86_64-linux/lib\n/usr/local/cuda/lib64\n"});
  return items;
}
}  // namespace

TEST_CASE("loader: libraries behind ld.so.conf.d includes and symlinked dirs are found") {
  auto t = tree_of(cuda_base(true));
  auto rows = check_loader_paths(t, scan::gather_facts(t), {"PATH=/usr/bin", "LD_LIBRARY_PATH=/usr/local/nvidia/lib"});
  REQUIRE(rows.size() == 2);  // libcudart.so.11.0, libcudnn.so.8 (no Paddle 2.x: libcudnn.so not asked)
  for (const auto& r : rows) {
    INFO(r.id << ": " << r.found);
    CHECK(r.status == Status::kPass);
    CHECK(r.found.find("via /etc/ld.so.conf.d/000_cuda.conf") != std::string::npos);
  }
  auto dirs = scan::loader_search_dirs(t, {"LD_LIBRARY_PATH=/a:/b"});
  REQUIRE(dirs.size() >= 4);
  CHECK(dirs[0].dir == "/a");
  CHECK(dirs[1].dir == "/b");
  CHECK(dirs[2].dir == "/usr/local/cuda/targets/x86_64-linux/lib");  // include glob in sorted order: 000_cuda first
  CHECK(dirs[2].via == "/etc/ld.so.conf.d/000_cuda.conf");
}

TEST_CASE("loader: a library that exists but is in no searched directory fails with the fix") {
  auto t = tree_of(cuda_base(false));
  auto rows = check_loader_paths(t, scan::gather_facts(t), {});
  auto* r = row(rows, "contents.loader.libcudart.so.11.0");
  REQUIRE(r);
  CHECK(r->status == Status::kFail);
  CHECK(r->found.find("/usr/local/cuda-11.8/redist/nvidia/cuda_runtime/lib/libcudart.so.11.0") != std::string::npos);
  CHECK(r->fix.find("/etc/ld.so.conf.d/") != std::string::npos);
  // The same image with LD_LIBRARY_PATH pointing at the folder passes.
  auto ok = check_loader_paths(t, scan::gather_facts(t), {"LD_LIBRARY_PATH=/usr/local/cuda/lib64"});
  CHECK(row(ok, "contents.loader.libcudart.so.11.0")->status == Status::kPass);
}

namespace {
// cuSPARSE 12 as NVIDIA's wheels ship it (DT_NEEDED libnvJitLink.so.12, a search path for it), an
// older nvJitLink under /usr/local/cuda/lib64 and, with `newer`, the one cuSPARSE was built with.
std::vector<TarItem> cusparse_image(bool rpath, bool older, bool newer) {
  using scan::testing::elf_library;
  const std::string sys = "usr/lib/x86_64-linux-gnu/";
  std::vector<TarItem> v = {
      {sys + "libcusparse.so.12",
       elf_library({"libnvJitLink.so.12", "libc.so.6"}, "libcusparse.so.12", "/opt/nvjitlink/lib:$ORIGIN", rpath)},
      {sys + "libc.so.6", elf_library({"ld-linux-x86-64.so.2"}, "libc.so.6")}};
  auto jitlink = [&](const std::string& dir, const std::string& version) {
    v.push_back({dir + "libnvJitLink.so.12", "libnvJitLink.so." + version, 'l'});
    v.push_back({dir + "libnvJitLink.so." + version, elf_library({"libc.so.6"}, "libnvJitLink.so.12")});
  };
  if (older) jitlink("usr/local/cuda/lib64/", "12.1.105");
  if (newer) jitlink("opt/nvjitlink/lib/", "12.6.85");
  return v;
}

scan::ContentsTree elf_tree_of(const std::vector<TarItem>& items) {
  scan::ContentsTree t(
      [](const std::string& p, int64_t n) { return scan::keep_for_facts(p, n) || scan::keep_for_loader(p, n); });
  t.examine_code(scan::examine_for_loader);  // as verify's tree (static_checks.cc)
  t.examine_dynamic(scan::read_dynamic_for_loader);
  image::StringReader r(make_tar(items));
  t.add_layer(r, "test layer");
  return t;
}

CheckResult cusparse_row(bool rpath, bool older, bool newer, const std::vector<std::string>& env) {
  auto t = elf_tree_of(cusparse_image(rpath, older, newer));
  auto rows = check_loader_paths(t, scan::gather_facts(t), env);
  auto* r = row(rows, "contents.loader.libcusparse.so.12");
  REQUIRE(r);
  INFO(r->found);
  return *r;
}
}  // namespace

TEST_CASE("loader: what a library needs (DT_NEEDED) is found as ld.so finds it, through its RUNPATH") {
  CheckResult ok = cusparse_row(false, false, true, {});
  CHECK(ok.status == Status::kPass);
  CHECK(ok.found.find("needs libnvJitLink.so.12 -> /opt/nvjitlink/lib/libnvJitLink.so.12.6.85 (via RUNPATH of "
                      "libcusparse.so.12)") != std::string::npos);
  CHECK(ok.found.find("libc.so.6") == std::string::npos);  // the C runtime: checked, not listed
  // Nothing provides it: the dlopen of cuSPARSE itself fails.
  CheckResult none = cusparse_row(false, false, false, {});
  CHECK(none.status == Status::kFail);
  CHECK(none.found.find("the loader finds no libnvJitLink.so.12 (needed by libcusparse.so.12)") != std::string::npos);
  CHECK(none.fix.find("libnvJitLink.so.12") != std::string::npos);
}

namespace {
// cuDNN 8 as NVIDIA's wheel ships it: libcudnn.so.8 (RUNPATH $ORIGIN) names the sub-libraries it
// dlopens as C strings, not as DT_NEEDED; libcudnn_cnn_infer.so.8 needs cuBLASLt.
std::vector<TarItem> cudnn_image(bool cnn, bool cublaslt) {
  using scan::testing::elf_library;
  const std::string lib = "usr/lib/x86_64-linux-gnu/";
  std::string strings = std::string(64, '\x90') + '\0' + "libcudnn_ops_infer.so.8" + '\0' + "libcudnn_cnn_infer.so.8" +
                        '\0' + std::string(64, '\x90');
  std::vector<TarItem> v = {
      {lib + "libcudnn.so.8",
       scan::testing::make_elf({{1, "libc.so.6"}, {14, "libcudnn.so.8"}, {29, "$ORIGIN"}}, strings)},
      {lib + "libcudnn_ops_infer.so.8", elf_library({"libc.so.6"}, "libcudnn_ops_infer.so.8", "$ORIGIN")},
      {lib + "libc.so.6", elf_library({"ld-linux-x86-64.so.2"}, "libc.so.6")}};
  if (cnn)
    v.push_back(
        {lib + "libcudnn_cnn_infer.so.8", elf_library({"libcudnn_ops_infer.so.8", "libcublasLt.so.11", "libc.so.6"},
                                                      "libcudnn_cnn_infer.so.8", "$ORIGIN")});
  if (cublaslt) v.push_back({lib + "libcublasLt.so.11", elf_library({"libc.so.6"}, "libcublasLt.so.11")});
  return v;
}

CheckResult cudnn_row(bool cnn, bool cublaslt) {
  auto t = elf_tree_of(cudnn_image(cnn, cublaslt));
  auto rows = check_loader_paths(t, scan::gather_facts(t), {});
  auto* r = row(rows, "contents.loader.libcudnn.so.8");
  REQUIRE(r);
  INFO(r->found);
  return *r;
}
}  // namespace

TEST_CASE("loader: cuDNN's dlopened sub-libraries are followed like its needs (its own C strings, its RUNPATH)") {
  CheckResult ok = cudnn_row(true, true);
  CHECK(ok.status == Status::kPass);
  CHECK(ok.found.find("dlopens libcudnn_cnn_infer.so.8 -> /usr/lib/x86_64-linux-gnu/libcudnn_cnn_infer.so.8, "
                      "libcudnn_ops_infer.so.8 -> /usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8") !=
        std::string::npos);
  // A sub-library missing: libcudnn.so.8 itself loads, the first convolution does not.
  CheckResult no_cnn = cudnn_row(false, true);
  CHECK(no_cnn.status == Status::kFail);
  CHECK(no_cnn.found.find("libcudnn.so.8 dlopens libcudnn_cnn_infer.so.8, which the loader finds nowhere") !=
        std::string::npos);
  CHECK(no_cnn.fix.find("libcudnn_cnn_infer.so.8") != std::string::npos);
  // What a sub-library needs (DT_NEEDED) is followed too.
  CheckResult no_lt = cudnn_row(true, false);
  CHECK(no_lt.status == Status::kFail);
  CHECK(no_lt.found.find("its libcudnn_cnn_infer.so.8") != std::string::npos);
  CHECK(no_lt.found.find("the loader finds no libcublasLt.so.11 (needed by libcudnn_cnn_infer.so.8)") !=
        std::string::npos);
}

TEST_CASE("loader: cuDNN 9 names its parts unversioned; they are opened with its major (libcudnn_graph.so.9)") {
  using scan::testing::elf_library;
  const std::string lib = "opt/site-packages/nvidia/cudnn/lib/";
  std::string strings =
      std::string(64, '\x90') + '\0' + "libcudnn_graph.so" + '\0' + "libcudnn_ops.so" + '\0' + std::string(64, '\x90');
  auto image = [&](bool graph) {
    std::vector<TarItem> v = {
        {lib + "libcudnn.so.9",
         scan::testing::make_elf({{1, "libc.so.6"}, {14, "libcudnn.so.9"}, {29, "$ORIGIN"}}, strings)},
        {lib + "libcudnn_ops.so.9", elf_library({"libc.so.6"}, "libcudnn_ops.so.9", "$ORIGIN")},
        {"usr/lib/x86_64-linux-gnu/libc.so.6", elf_library({}, "libc.so.6")}};
    if (graph) v.push_back({lib + "libcudnn_graph.so.9", elf_library({"libc.so.6"}, "libcudnn_graph.so.9", "$ORIGIN")});
    return v;
  };
  auto row_of = [&](bool graph) {
    auto t = elf_tree_of(image(graph));
    auto rows = check_loader_paths(t, scan::gather_facts(t), {"LD_LIBRARY_PATH=/" + lib});
    auto* r = row(rows, "contents.loader.libcudnn.so.9");
    REQUIRE(r);
    INFO(r->found);
    return *r;
  };
  CheckResult ok = row_of(true);
  CHECK(ok.status == Status::kPass);
  CHECK(ok.found.find("dlopens libcudnn_graph.so.9 -> /" + lib + "libcudnn_graph.so.9, libcudnn_ops.so.9 -> /" + lib +
                      "libcudnn_ops.so.9") != std::string::npos);
  CheckResult missing = row_of(false);
  CHECK(missing.status == Status::kFail);
  CHECK(missing.found.find("libcudnn.so.9 dlopens libcudnn_graph.so.9, which the loader finds nowhere") !=
        std::string::npos);
}

TEST_CASE("loader: LD_LIBRARY_PATH comes before a RUNPATH, after an RPATH (an older nvJitLink wins or not)") {
  const std::vector<std::string> env = {"LD_LIBRARY_PATH=/usr/local/cuda/lib64"};
  CheckResult runpath = cusparse_row(false, true, true, env);
  CHECK(runpath.status == Status::kFail);
  CHECK(runpath.found.find("the loader opens /usr/local/cuda/lib64/libnvJitLink.so.12.1.105 (12.1.105) before the "
                           "newer /opt/nvjitlink/lib/libnvJitLink.so.12.6.85 (12.6.85)") != std::string::npos);
  CHECK(runpath.fix.find("put /opt/nvjitlink/lib before /usr/local/cuda/lib64") != std::string::npos);
  CheckResult rpath = cusparse_row(true, true, true, env);
  CHECK(rpath.status == Status::kPass);
  CHECK(rpath.found.find("-> /opt/nvjitlink/lib/libnvJitLink.so.12.6.85 (via RPATH of libcusparse.so.12)") !=
        std::string::npos);
  // Without the newer copy the older one is what there is: found, nothing newer to prefer.
  CHECK(cusparse_row(false, true, false, env).status == Status::kPass);
}

TEST_CASE("loader: $ORIGIN is the folder the object was found in; RPATH is ignored beside a RUNPATH") {
  auto t = elf_tree_of(
      {{"opt/a/lib/libx.so.1", scan::testing::make_elf({{15, "/rpath"}, {29, "$ORIGIN/../dep:${ORIGIN}"}})}});
  scan::ImageLoader loader(t, scan::gather_facts(t), {"LD_LIBRARY_PATH=/ld"});
  const scan::ElfDynamic* elf = loader.dynamic_of("/opt/a/lib/libx.so.1");
  REQUIRE(elf);
  auto dirs = loader.dirs_for("/opt/link/libx.so.1", *elf);
  REQUIRE(dirs.size() >= 4);
  CHECK(dirs[0].dir == "/ld");
  CHECK(dirs[1].dir == "/opt/dep");
  CHECK(dirs[1].via == "RUNPATH of libx.so.1");
  CHECK(dirs[2].dir == "/opt/link");
  for (const auto& d : dirs) CHECK(d.dir != "/rpath");
}

namespace {
// A Paddle 2.6.2 (CUDA 11.8) GPU image as the generator makes it on the complete wheel base: the
// base's libraries under /usr/local/cuda (wheel folders + RECORDs), the dev links Paddle dlopens in
// /usr/local/lib/paddle-dynload, both folders in /etc/ld.so.conf.d. `drop` leaves one link out.
std::vector<TarItem> paddle26_image(const std::string& drop = "") {
  auto items = cuda_base(true);
  const std::string d = "usr/local/cuda-11.8/", lib = d + "targets/x86_64-linux/lib/";
  auto wheel = [&](const std::string& pkg, const std::string& ver, const std::string& dir,
                   std::vector<std::string> files) {
    std::string record;
    for (const auto& f : files) {
      if (f != "libcudart.so.11.0" && f != "libcudnn.so.8") {
        items.push_back({d + "redist/" + dir + "/" + f, "elf"});
        items.push_back({lib + f, "../../../redist/" + dir + "/" + f, 'l'});
      }
      record += dir + "/" + f + ",sha256=x,3\n";
    }
    items.push_back({d + "redist/" + pkg + "-" + ver + ".dist-info/RECORD", record});
  };
  wheel("nvidia_cuda_runtime_cu11", "11.8.89", "nvidia/cuda_runtime/lib", {"libcudart.so.11.0"});
  wheel("nvidia_cudnn_cu11", "8.6.0.163", "nvidia/cudnn/lib", {"libcudnn.so.8"});
  wheel("nvidia_cublas_cu11", "11.11.3.6", "nvidia/cublas/lib", {"libcublas.so.11", "libcublasLt.so.11"});
  wheel("nvidia_curand_cu11", "10.3.0.86", "nvidia/curand/lib", {"libcurand.so.10"});
  wheel("nvidia_cusolver_cu11", "11.4.1.48", "nvidia/cusolver/lib", {"libcusolver.so.11"});
  wheel("nvidia_cusparse_cu11", "11.7.5.86", "nvidia/cusparse/lib", {"libcusparse.so.11"});
  wheel("nvidia_cufft_cu11", "10.9.0.58", "nvidia/cufft/lib", {"libcufft.so.10"});
  wheel("nvidia_cuda_nvrtc_cu11", "11.8.89", "nvidia/cuda_nvrtc/lib", {"libnvrtc.so.11.2"});
  wheel("nvidia_nccl_cu11", "2.15.5", "nvidia/nccl/lib", {"libnccl.so.2"});
  wheel("nvidia_nvjpeg_cu11", "11.9.0.86", "nvidia/nvjpeg/lib", {"libnvjpeg.so.11"});
  auto paddle = python_paddle_layer("3.11", "paddlepaddle_gpu", "2.6.2", "11.8", "8.6.0");
  items.insert(items.end(), paddle.begin(), paddle.end());
  const std::string dyn = "usr/local/lib/paddle-dynload/";
  for (auto [name, so] : std::vector<std::pair<std::string, std::string>>{{"libcublas.so", "libcublas.so.11"},
                                                                          {"libcublasLt.so", "libcublasLt.so.11"},
                                                                          {"libcudnn.so", "libcudnn.so.8"},
                                                                          {"libcurand.so", "libcurand.so.10"},
                                                                          {"libcusolver.so", "libcusolver.so.11"},
                                                                          {"libcusparse.so", "libcusparse.so.11"},
                                                                          {"libcufft.so", "libcufft.so.10"},
                                                                          {"libnvrtc.so", "libnvrtc.so.11.2"},
                                                                          {"libnccl.so", "libnccl.so.2"},
                                                                          {"libnvjpeg.so", "libnvjpeg.so.11"}})
    if (name != drop) items.push_back({dyn + name, "/usr/local/cuda/targets/x86_64-linux/lib/" + so, 'l'});
  items.push_back({"etc/ld.so.conf.d/zz-paddle-dynload.conf", "/usr/local/lib/paddle-dynload\n"});
  return items;
}

Claims gpu_claims(const std::string& cudnn = "8.6") {
  Claims c;
  c.labels = {{"variant", "gpu"}, {"cuda", "11.8"}, {"cudnn", cudnn}, {"paddle", "2.6.2"}};
  return c;
}

std::map<std::string, const CheckResult*> by_id(const std::vector<CheckResult>& rows) {
  std::map<std::string, const CheckResult*> m;
  for (const auto& r : rows) m[r.id] = &r;
  return m;
}
}  // namespace

TEST_CASE("Paddle 2.6 rows: every library Paddle dlopens resolves, through its dev link, at its pip version") {
  auto t = tree_of(paddle26_image());
  auto rows = check_paddle_libraries(t, scan::gather_facts(t), {}, gpu_claims(), test_kb());
  auto r = by_id(rows.rows);
  for (auto lib :
       {"cublas", "cublasLt", "cudnn", "curand", "cusolver", "cusparse", "cufft", "nvrtc", "nccl", "nvjpeg"}) {
    REQUIRE_MESSAGE(r.count(std::string("loader.") + lib), lib);
    INFO(lib << ": " << r[std::string("loader.") + lib]->found);
    CHECK(r[std::string("loader.") + lib]->status == Status::kPass);
  }
  CHECK(r["loader.cublas"]->found ==
        "/usr/local/lib/paddle-dynload/libcublas.so -> /usr/local/cuda-11.8/redist/nvidia/cublas/lib/"
        "libcublas.so.11 (11.11.3.6, from nvidia_cublas_cu11-11.11.3.6.dist-info; via "
        "/etc/ld.so.conf.d/zz-paddle-dynload.conf)");
  CHECK(r["loader.cupti"]->status == Status::kWarn);  // the profiler's: no CUPTI in a runtime image
  CHECK(r["loader.cupti"]->fix.rfind("only the profiler's GPU tracing (paddle.profiler) needs it", 0) == 0);
  CHECK(r["loader.cudnn"]->found.find("8.6.0.163") != std::string::npos);
  CHECK(std::count(rows.sonames.begin(), rows.sonames.end(), "libcublas.so.11") == 1);
}

TEST_CASE(
    "Paddle 2.6 rows: a missing dev link fails, naming what the loader searched, what the image holds and the fix") {
  auto t = tree_of(paddle26_image("libcufft.so"));
  auto rows = check_paddle_libraries(t, scan::gather_facts(t), {}, gpu_claims(),
                                     test_kb());  // kept alive: by_id points into it
  auto r = by_id(rows.rows);
  const CheckResult* fft = r["loader.cufft"];
  REQUIRE(fft);
  CHECK(fft->status == Status::kFail);
  CHECK(fft->title.find("paddle.fft") != std::string::npos);
  CHECK(fft->found.rfind("dlopen(\"libcufft.so\") finds nothing in /usr/local/lib/python3.11/dist-packages/paddle/libs:"
                         "/usr/local/cuda/targets/x86_64-linux/lib:",
                         0) == 0);  // libphi.so's RUNPATH, then the cache
  CHECK(fft->found.find("the image holds /usr/local/cuda-11.8/redist/nvidia/cufft/lib/libcufft.so.10") !=
        std::string::npos);
  CHECK(
      fft->fix.rfind(
          "link it in a folder the loader searches: ln -s /usr/local/cuda-11.8/redist/nvidia/cufft/lib/libcufft.so.10 "
          "/usr/local/lib/paddle-dynload/libcufft.so",
          0) == 0);
}

TEST_CASE(
    "Paddle 2.6 rows: an older cuDNN found first fails naming both; the version opened is held against the claim") {
  auto items = paddle26_image();
  // An older cuDNN 8 in a folder the loader searches before the CUDA one (LD_LIBRARY_PATH).
  items.push_back({"opt/old/libcudnn.so.8.2.1", "old"});
  items.push_back({"opt/old/libcudnn.so", "libcudnn.so.8.2.1", 'l'});
  auto t = tree_of(items);
  auto rows = check_paddle_libraries(t, scan::gather_facts(t), {"LD_LIBRARY_PATH=/opt/old"}, gpu_claims(), test_kb());
  auto r = by_id(rows.rows);
  const CheckResult* c = r["loader.cudnn"];
  REQUIRE(c);
  CHECK(c->status == Status::kFail);
  CHECK(c->found.find(
            "/opt/old/libcudnn.so -> /opt/old/libcudnn.so.8.2.1 (8.2.1, from its file name; via LD_LIBRARY_PATH)") !=
        std::string::npos);
  CHECK(c->found.find(
            "a newer copy, /usr/local/cuda-11.8/redist/nvidia/cudnn/lib/libcudnn.so.8 (8.6.0.163), comes after it") !=
        std::string::npos);
  CHECK(c->fix.rfind("remove the older copy /opt/old/libcudnn.so.8.2.1", 0) == 0);
  // The image claiming cuDNN 8.9 while the loader opens 8.6.0.163: a failure naming both.
  auto t2 = tree_of(paddle26_image());
  auto rows2 = check_paddle_libraries(t2, scan::gather_facts(t2), {}, gpu_claims("8.9"), test_kb());
  auto r2 = by_id(rows2.rows);
  CHECK(r2["loader.cudnn"]->status == Status::kFail);
  CHECK(r2["loader.cudnn"]->fix.rfind("the loader opens cuDNN 8.6.0.163, not the claimed 8.9", 0) == 0);
}

TEST_CASE("base rows: a CUDA base's library set at the pins of kb/cuda_wheels.yaml") {
  auto items = paddle26_image();
  auto t = tree_of(items);
  auto rows = check_base_libraries(t, scan::gather_facts(t), {}, "11.8", test_kb());
  auto r = by_id(rows);
  CHECK(r["base.cublas"]->status == Status::kPass);
  CHECK(r["base.cudnn"]->status == Status::kPass);
  CHECK(r["base.cudnn"]->expected == "libcudnn.so.8 nvidia-cudnn-cu11 8.6.0.163, found by the loader");
  CHECK(r["base.npp"]->status == Status::kFail);  // the crafted image left NPP out
  CHECK(r["base.npp"]->found.find("the image holds no libnppc.so.11") != std::string::npos);
  CHECK(rows.size() == test_kb().runtime_set("11")->libs.size());
  // A version other than the pin fails: the RECORD says 11.11.3.5.
  for (auto& it : items)
    if (it.path.find("nvidia_cublas_cu11-11.11.3.6.dist-info/RECORD") != std::string::npos)
      it.path = "usr/local/cuda-11.8/redist/nvidia_cublas_cu11-11.11.3.5.dist-info/RECORD";
  auto t2 = tree_of(items);
  auto base2 = check_base_libraries(t2, scan::gather_facts(t2), {}, "11.8", test_kb());
  auto r2 = by_id(base2);
  CHECK(r2["base.cublas"]->status == Status::kFail);
  CHECK(r2["base.cublas"]->fix.rfind("rebuild the base with scripts/make-cuda-base.sh 11.8", 0) == 0);
}

TEST_CASE("loader: an image without CUDA libraries has no loader rows") {
  auto t = tree_of({{"usr/bin/python3", "x"}});
  CHECK(check_loader_paths(t, scan::gather_facts(t), {}).empty());
}

TEST_CASE("long paths under the cap reach the loader-path rows without std::regex (no stack overflow)") {
  scan::ContentsLimits roomy;
  roomy.max_path = 1 << 20;
  std::string site = "/opt/";
  while (site.size() < 200000) site += std::string(99, 'b') + "/";  // 2000 components: each resolve step is cheap
  site += "lib/python3.11/site-packages";
  scan::ContentsTree t(scan::keep_for_facts, roomy);
  add(t, {{site.substr(1) + "/paddlepaddle_gpu-2.6.2.dist-info/METADATA", "Name: paddlepaddle-gpu\n"},
          {site.substr(1) + "/nvidia/cudnn/lib/libcudnn.so.8", "elf"},
          {"usr/local/cuda/lib64/libcudart.so.11.0", "elf"}});
  scan::ContentsFacts f = scan::gather_facts(t);
  REQUIRE(f.paddles.size() == 1);
  auto rows = check_loader_paths(t, f, {});
  std::map<std::string, Status> status;
  for (auto& r : rows) status[r.id] = r.status;
  CHECK(status["contents.loader.libcudnn.so.8"] == Status::kPass);      // found through <site>/nvidia/*/lib
  CHECK(status["contents.loader.libcudart.so.11.0"] == Status::kFail);  // in no searched directory
}

// Issue 32 section 1: verify resolves the exact string Paddle asks for when its libraries hold it.
TEST_CASE("Paddle rows: the name libphi.so holds decides, not the KB's guess; a name it does not hold is the KB's") {
  auto items = paddle26_image();
  std::string site = "usr/local/lib/python3.11/dist-packages";
  // libphi.so holds "libcufft.so.99" (no such library in the image) and both NCCL names (as Paddle 3's list).
  items.push_back({site + "/paddle/libs/libphi.so",
                   std::string("\x7f"
                               "ELF\0libcufft.so.99\0libnccl.so;libnccl.so.2\0",
                               44),
                   'f'});
  scan::ContentsTree t(
      [](const std::string& p, int64_t n) { return scan::keep_for_facts(p, n) || scan::keep_for_loader(p, n); });
  t.examine_code(scan::examine_for_facts);
  image::StringReader r(scan::testing::make_tar(items));
  t.add_layer(r, "test layer");
  auto facts = scan::gather_facts(t);
  auto checked = check_paddle_libraries(t, facts, {}, gpu_claims(), test_kb());
  auto rows = by_id(checked.rows);
  REQUIRE(rows.count("loader.cufft"));
  INFO(rows["loader.cufft"]->expected << " / " << rows["loader.cufft"]->found);
  CHECK(rows["loader.cufft"]->status == Status::kFail);
  CHECK(rows["loader.cufft"]->title.find("loads libcufft.so.99 (the name Paddle's libraries hold; the KB says "
                                         "another)") != std::string::npos);
  CHECK(rows["loader.cufft"]->found.find("dlopen(\"libcufft.so.99\") finds nothing") == 0);
  CHECK(rows["loader.nccl"]->status == Status::kPass);    // two names held: the KB's libnccl.so
  CHECK(rows["loader.cublas"]->status == Status::kPass);  // none held (built in code): the KB's libcublas.so
}

TEST_CASE("loader.cuda: libcuda.so comes from the host driver; a stub, a copy or a foreign link in the image fails") {
  auto cuda_row = [](std::vector<TarItem> extra, const std::vector<std::string>& env = {}) {
    auto items = paddle26_image();
    items.insert(items.end(), extra.begin(), extra.end());
    auto t = tree_of(items);
    auto rows = check_paddle_libraries(t, scan::gather_facts(t), env, gpu_claims(), test_kb());
    auto r = by_id(rows.rows);
    REQUIRE(r.count("loader.cuda"));
    INFO(r["loader.cuda"]->found);
    return *r["loader.cuda"];
  };
  CheckResult none = cuda_row({});
  CHECK(none.status == Status::kPass);
  CHECK(none.found.find("links libcuda.so -> libcuda.so.1 at run time") != std::string::npos);
  // The toolkit's own link, made in the image (dangling without the driver): allowed.
  CHECK(cuda_row({{"usr/lib/x86_64-linux-gnu/libcuda.so", "libcuda.so.1", 'l'}}).status == Status::kPass);
  // The stub behind LD_LIBRARY_PATH.
  CheckResult stub = cuda_row({{"usr/local/cuda-11.8/targets/x86_64-linux/lib/stubs/libcuda.so", "stub"}},
                              {"LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs"});
  CHECK(stub.status == Status::kFail);
  CHECK(stub.found.find("CUDA_ERROR_STUB_LIBRARY (34)") != std::string::npos);
  CHECK(stub.fix.find("/usr/local/cuda/lib64/stubs") != std::string::npos);
  // A link the toolkit would keep, to another name.
  CheckResult foreign = cuda_row({{"usr/lib/x86_64-linux-gnu/libcuda.so", "libcuda.so.535.104.05", 'l'}});
  CHECK(foreign.status == Status::kFail);
  CHECK(foreign.found.find("the toolkit keeps an image's own link") != std::string::npos);
  // A driver library copied into the image.
  CHECK(cuda_row({{"usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver"}}).status == Status::kFail);
  // cuda-compat in the loader's way: a warning (forward compatibility is a deliberate choice).
  CheckResult compat =
      cuda_row({{"usr/local/cuda-11.8/compat/libcuda.so.1", "compat"}}, {"LD_LIBRARY_PATH=/usr/local/cuda/compat"});
  CHECK(compat.status == Status::kWarn);
}
