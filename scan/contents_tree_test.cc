// ContentsTree (layers, whiteouts, links) and gather_facts on crafted tar layers.
#include "scan/contents_tree.h"

#include <doctest/doctest.h>

#include "core/error.h"
#include "image/blob.h"
#include "scan/contents_facts.h"
#include "scan/testing/layers.h"

using namespace imgtool;
using namespace imgtool::scan;
using namespace imgtool::scan::testing;

TEST_CASE("layers merge with whiteouts and opaque dirs; gzip and zstd are read") {
  ContentsTree t;
  add(t, {{"etc/", "", 'd'}, {"etc/a", "1"}, {"etc/b", "2"}, {"opt/x/1", "1"}, {"opt/x/2", "2"}, {"keep", "k"}},
      "gzip");
  add(t, {{"etc/.wh.a", ""}, {"opt/x/.wh..wh..opq", ""}, {"opt/x/3", "3"}}, "zstd");
  CHECK(t.find("/etc/a") == nullptr);
  CHECK(t.find("/etc/b") != nullptr);
  CHECK(t.find("/opt/x/1") == nullptr);
  CHECK(t.find("/opt/x/3") != nullptr);  // the layer's own entries survive its opaque marker
  CHECK(t.find("/keep") != nullptr);
  add(t, {{".wh.opt", ""}});
  CHECK(t.find("/opt/x/3") == nullptr);
  CHECK(t.find("/opt") == nullptr);
}

TEST_CASE("symlinks resolve through directories, relative and absolute; dangling and loops do not") {
  ContentsTree t;
  add(t, {{"usr/local/cuda-12.6/lib64/libcudnn.so.9.5.1", "x"},
          {"usr/local/cuda", "cuda-12.6", 'l'},
          {"usr/local/cuda-12.6/lib64/libcudnn.so.9", "libcudnn.so.9.5.1", 'l'},
          {"usr/lib/libcudnn.so", "/usr/local/cuda/lib64/libcudnn.so.9", 'l'},
          {"usr/lib/broken.so", "nowhere.so", 'l'},
          {"a", "b", 'l'},
          {"b", "a", 'l'},
          {"usr/lib/hard", "usr/local/cuda-12.6/lib64/libcudnn.so.9.5.1", 'h'}});
  CHECK(t.resolve("/usr/lib/libcudnn.so") == "/usr/local/cuda-12.6/lib64/libcudnn.so.9.5.1");
  CHECK(t.resolve("/usr/local/cuda/lib64/../lib64/libcudnn.so.9") == "/usr/local/cuda-12.6/lib64/libcudnn.so.9.5.1");
  CHECK_FALSE(t.resolve("/usr/lib/broken.so").has_value());
  CHECK_FALSE(t.resolve("/a").has_value());
  CHECK(t.find("/usr/lib/hard")->type == FsEntry::Type::kFile);
}

TEST_CASE("a non-tar layer is a clear error") {
  ContentsTree t;
  image::StringReader r(std::string(2000, 'z'));
  CHECK_THROWS_AS(t.add_layer(r, "layer sha256:x"), Error);
}

TEST_CASE("facts: python, paddle GPU build, CUDA libraries from files and pip dist-infos") {
  ContentsTree t(keep_for_facts);
  auto items = python_paddle_layer("3.11", "paddlepaddle_gpu", "3.2.0", "12.6", "9.5.1");
  std::string nv = "usr/local/lib/python3.11/dist-packages/nvidia/";
  items.insert(items.end(),
               {{nv + "cudnn/lib/libcudnn.so.9", "x"},
                {"usr/local/lib/python3.11/dist-packages/nvidia_cudnn_cu12-9.5.1.17.dist-info/METADATA", "m"},
                {nv + "cuda_runtime/lib/libcudart.so.12", "x"},
                {"usr/local/lib/python3.11/dist-packages/nvidia_cuda_runtime_cu12-12.6.77.dist-info/METADATA", "m"},
                {nv + "cublas/lib/libcublas.so.12", "x"},
                {"usr/lib/python3.11/venv/pyvenv.cfg", "home = /usr/bin\nversion = 3.11.2\n"}});
  add(t, items);
  ContentsFacts f = gather_facts(t);
  CHECK(f.pythons == std::vector<std::string>{"3.11"});
  CHECK(f.venv_pythons == std::vector<std::string>{"3.11"});
  REQUIRE(f.paddles.size() == 1);
  CHECK(f.paddles[0].name == "paddlepaddle-gpu");
  CHECK(f.paddles[0].version == "3.2.0");
  CHECK(f.paddles[0].python == "3.11");
  CHECK(f.paddles[0].gpu);
  CHECK(f.paddles[0].compiled_cuda == "12.6");
  CHECK(f.lib("cudart").version == "12.6.77");
  CHECK(f.lib("cudnn").version == "9.5.1.17");
  CHECK(f.lib("cublas").version == "12");
  CHECK(f.cudnn_links.empty());
}

TEST_CASE("facts: the version file decides CPU even if other hints say GPU; no file -> METADATA") {
  ContentsTree t(keep_for_facts);
  add(t, python_paddle_layer("3.10", "paddlepaddle", "3.1.0", "False"));
  ContentsFacts f = gather_facts(t);
  REQUIRE(f.paddles.size() == 1);
  CHECK_FALSE(f.paddles[0].gpu);
  CHECK(f.paddles[0].gpu_evidence.find("cuda_version='False'") != std::string::npos);

  ContentsTree u(keep_for_facts);
  add(u, {{"usr/lib/python3.12/os.py", "#"},
          {"usr/lib/python3.12/site-packages/paddlepaddle-3.0.0.dist-info/METADATA",
           "Name: paddlepaddle\nRequires-Dist: nvidia-cudnn-cu12==9.5.1.17\n"}});
  f = gather_facts(u);
  REQUIRE(f.paddles.size() == 1);
  CHECK(f.paddles[0].gpu);
  CHECK(f.paddles[0].gpu_evidence.find("nvidia") != std::string::npos);
}

TEST_CASE("facts: a whited-out paddle and a dangling libcudnn.so") {
  ContentsTree t(keep_for_facts);
  add(t, python_paddle_layer("3.11", "paddlepaddle", "3.2.0", "False"));
  add(t, {{"usr/local/lib/python3.11/dist-packages/.wh.paddlepaddle-3.2.0.dist-info", ""},
          {"usr/lib/x86_64-linux-gnu/libcudnn.so", "libcudnn.so.9", 'l'}});
  ContentsFacts f = gather_facts(t);
  CHECK(f.paddles.empty());
  REQUIRE(f.cudnn_links.size() == 1);
  CHECK(f.cudnn_links[0].resolved.empty());
  CHECK_FALSE(f.lib("cudnn").present());
}
