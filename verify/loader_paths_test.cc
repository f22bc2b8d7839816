// Loader lookup of CUDA libraries (loader_paths.h) on crafted tar layers.
#include <doctest/doctest.h>

#include "image/blob.h"
#include "verify/contents_facts.h"
#include "verify/contents_tree.h"
#include "verify/loader_paths.h"
#include "verify/static_test_util.h"

using namespace imgtool;
using namespace imgtool::verify;
using namespace imgtool::verify::testing;

namespace {
ContentsTree tree_of(const std::vector<TarItem>& items) {
  ContentsTree t([](const std::string& p, int64_t n) { return keep_for_facts(p, n) || keep_for_loader(p, n); });
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
  if (with_conf) items.push_back({"etc/ld.so.conf.d/000_cuda.conf", "/usr/local/cuda/targets/x86_64-linux/lib\n/usr/local/cuda/lib64\n"});
  return items;
}
}  // namespace

TEST_CASE("loader: libraries behind ld.so.conf.d includes and symlinked dirs are found") {
  auto t = tree_of(cuda_base(true));
  auto rows = check_loader_paths(t, gather_facts(t), {"PATH=/usr/bin", "LD_LIBRARY_PATH=/usr/local/nvidia/lib"});
  REQUIRE(rows.size() == 2);  // libcudart.so.11.0, libcudnn.so.8 (no Paddle 2.x: libcudnn.so not asked)
  for (const auto& r : rows) {
    INFO(r.id << ": " << r.found);
    CHECK(r.status == Status::kPass);
    CHECK(r.found.find("via /etc/ld.so.conf.d/000_cuda.conf") != std::string::npos);
  }
  auto dirs = loader_search_dirs(t, gather_facts(t), {"LD_LIBRARY_PATH=/a:/b"});
  REQUIRE(dirs.size() >= 4);
  CHECK(dirs[0].dir == "/a");
  CHECK(dirs[1].dir == "/b");
  CHECK(dirs[2].dir == "/usr/local/cuda/targets/x86_64-linux/lib");  // include glob in sorted order: 000_cuda first
  CHECK(dirs[2].via == "/etc/ld.so.conf.d/000_cuda.conf");
}

TEST_CASE("loader: a library that exists but is in no searched directory fails with the fix") {
  auto t = tree_of(cuda_base(false));
  auto rows = check_loader_paths(t, gather_facts(t), {});
  auto* r = row(rows, "contents.loader.libcudart.so.11.0");
  REQUIRE(r);
  CHECK(r->status == Status::kFail);
  CHECK(r->found.find("/usr/local/cuda-11.8/redist/nvidia/cuda_runtime/lib/libcudart.so.11.0") != std::string::npos);
  CHECK(r->fix.find("/etc/ld.so.conf.d/") != std::string::npos);
  // The same image with LD_LIBRARY_PATH pointing at the folder passes.
  auto ok = check_loader_paths(t, gather_facts(t), {"LD_LIBRARY_PATH=/usr/local/cuda/lib64"});
  CHECK(row(ok, "contents.loader.libcudart.so.11.0")->status == Status::kPass);
}

TEST_CASE("loader: Paddle 2.x GPU builds need libcudnn.so; Paddle's pip-layout folders count") {
  auto items = python_paddle_layer("3.11", "paddlepaddle_gpu", "2.6.2", "11.8", "8.6.0");
  std::string site = "usr/local/lib/python3.11/dist-packages/";
  items.insert(items.end(), {{site + "nvidia/cublas/lib/libcublas.so.11", "x"},
                             {"opt/cudnn/libcudnn.so.8", "x"},
                             {"opt/cudnn/libcudnn.so", "libcudnn.so.8", 'l'}});
  auto t = tree_of(items);
  auto rows = check_loader_paths(t, gather_facts(t), {});
  auto* cublas = row(rows, "contents.loader.libcublas.so.11");
  REQUIRE(cublas);
  CHECK(cublas->status == Status::kPass);
  CHECK(cublas->found.find("Paddle (pip layout)") != std::string::npos);
  auto* dev = row(rows, "contents.loader.libcudnn.so");
  REQUIRE(dev);
  CHECK(dev->status == Status::kFail);
  CHECK(dev->fix.find("/opt/cudnn") != std::string::npos);
}

TEST_CASE("loader: an image without CUDA libraries has no loader rows") {
  auto t = tree_of({{"usr/bin/python3", "x"}});
  CHECK(check_loader_paths(t, gather_facts(t), {}).empty());
}
