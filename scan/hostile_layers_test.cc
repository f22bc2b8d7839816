// ContentsTree and gather_facts on hostile layers: huge paths, filters that
// are not gzip/zstd/none, too many entries or kept bytes, hard-link fan-out,
// a reader that fails mid-stream; and the regex-free name matchers.
#include <doctest/doctest.h>

#include "core/error.h"
#include "core/fs.h"
#include "image/blob.h"
#include "image/testing/blob_readers.h"
#include "scan/contents_facts.h"
#include "scan/contents_tree.h"
#include "scan/name_match.h"
#include "scan/testing/layers.h"
#include "tests/error_of.h"
#include "tests/test_dirs.h"

using namespace imgtool;
using namespace imgtool::scan;
using namespace imgtool::scan::testing;

using imgtool::testing::error_of;
using imgtool::testing::source_dir;

TEST_CASE("a 50 KB path is refused with a clear error, and never crashes the scan") {
  std::string deep = "usr/lib/python3.11/site-packages/";
  while (deep.size() < 50000) deep += "aaaaaaaaa/";
  deep += "paddlepaddle-3.2.0.dist-info/METADATA";
  ContentsTree t(keep_for_facts);
  std::string err = error_of([&] { add(t, {{deep, "Name: paddlepaddle\n"}}); });
  CHECK(err.find("paths of at most 4096 bytes") != std::string::npos);
  gather_facts(t);  // whatever was kept: no crash
}

TEST_CASE("a tar entry of negative size is refused, naming it (found by fuzz_layer)") {
  // libarchive refuses a negative size in a plain header, but this GNU tar reaches it: kept
  // (a negative size passes "size < 4096"), it used to size a std::string (length_error).
  std::string tar = read_file(source_dir() + "/fuzz/corpus/layer/crash-negative-size");
  ContentsTree tree([](const std::string&, int64_t size) { return size < 4096; });
  image::StringReader in(tar);
  std::string e = error_of([&] { tree.add_layer(in, "layer 1"); });
  CHECK_MESSAGE(e.rfind("layer 1: expected tar entries of non-negative size, found -", 0) == 0, e);
}

TEST_CASE("long paths under the cap are scanned without std::regex (no stack overflow)") {
  ContentsLimits roomy;
  roomy.max_path = 1 << 20;
  std::string deep = "opt/";
  while (deep.size() < 200000) deep += "b/";
  deep += "lib/python3.11/site-packages/paddlepaddle-3.2.0.dist-info/METADATA";
  ContentsTree t(keep_for_facts, roomy);
  add(t, {{deep, "Name: paddlepaddle\n"}});
  ContentsFacts f = gather_facts(t);
  REQUIRE(f.paddles.size() == 1);
  CHECK(f.paddles[0].python == "3.11");
  CHECK(f.paddles[0].version == "3.2.0");
}

TEST_CASE("only gzip, zstd and uncompressed layers are read") {
  for (const char* ok : {"", "gzip", "zstd"}) {
    ContentsTree t;
    CHECK_NOTHROW(add(t, {{"etc/a", "1"}}, ok));
  }
  for (const char* refused : {"xz", "bzip2", "lzip"}) {
    ContentsTree t;
    std::string err = error_of([&] { add(t, {{"etc/a", "1"}}, refused); });
    CHECK_MESSAGE(err.find("uncompressed, gzip or zstd") != std::string::npos, refused << ": " << err);
    CHECK(t.find("/etc/a") == nullptr);
  }
}

TEST_CASE("entries and kept bytes are capped over all layers") {
  ContentsLimits small;
  small.max_entries = 5;
  ContentsTree t(nullptr, small);
  add(t, {{"a", ""}, {"b", ""}, {"c", ""}});
  std::string err = error_of([&] { add(t, {{"d", ""}, {"e", ""}, {"f", ""}}); });
  CHECK(err.find("at most 5 tar entries") != std::string::npos);

  ContentsLimits kept;
  kept.max_kept_bytes = 1000;
  ContentsTree k([](const std::string&, int64_t) { return true; }, kept);
  err = error_of([&] { add(k, {{"a", std::string(600, 'x')}, {"b", std::string(600, 'y')}}); });
  CHECK(err.find("at most 1000 bytes of kept") != std::string::npos);
}

TEST_CASE("hard links share the kept bytes of their target instead of copying them") {
  ContentsTree t([](const std::string&, int64_t) { return true; });
  std::vector<TarItem> items{{"big", std::string(1 << 20, 'x')}};
  for (int i = 0; i < 200; ++i) items.push_back({"link" + std::to_string(i), "big", 'h'});
  add(t, items);
  REQUIRE(t.find("/link199") != nullptr);
  CHECK(t.find("/link199")->content.get() == t.find("/big")->content.get());  // the same bytes, not a 1 MiB copy each
  CHECK(t.find("/link0")->content->size() == size_t(1) << 20);
}

TEST_CASE("the reader's exception comes back as it was, not through libarchive's C frames") {
  std::vector<TarItem> items;
  for (int i = 0; i < 200; ++i) items.push_back({"f" + std::to_string(i), std::string(4096, 'a' + i % 26)});
  image::testing::CutReader r(make_tar(items));
  ContentsTree t;
  try {
    t.add_layer(r, "layer");
    FAIL("expected the reader's error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "connection cut by the test");
    CHECK(e.retryable);
  }
}

TEST_CASE("name matchers say exactly what the old regular expressions said") {
  using namespace names;
  CHECK(stdlib_python("/usr/lib/python3.11/os.py") == "3.11");
  CHECK(stdlib_python("/lib/python3.9/os.py") == "3.9");
  CHECK_FALSE(stdlib_python("/usr/lib/python3.11/x/os.py"));
  CHECK_FALSE(stdlib_python("/usr/lib/python3/os.py"));
  CHECK_FALSE(stdlib_python("/usr/xlib/python3.11/os.py"));
  auto s = site_packages("/a/lib/python3.10/site-packages/b/lib/python3.12/dist-packages/x");
  REQUIRE(s);
  CHECK(s->dir == "/a/lib/python3.10/site-packages/b/lib/python3.12/dist-packages");
  CHECK(s->python == "3.12");
  CHECK_FALSE(site_packages("/usr/lib/python3.11/site-packages"));
  auto d = paddle_dist("/x/site-packages/paddlepaddle_gpu-3.0.0rc1.dist-info");
  REQUIRE(d);
  CHECK(d->parent == "/x/site-packages");
  CHECK(d->name == "paddlepaddle_gpu");
  CHECK(d->version == "3.0.0rc1");
  CHECK(paddle_dist("/x/paddlepaddle-3.2.0.dist-info")->name == "paddlepaddle");
  CHECK_FALSE(paddle_dist("/x/paddlepaddleGPU-3.2.0.dist-info"));
  CHECK_FALSE(paddle_dist("/x/paddle-3.2.0.dist-info"));
  CHECK(versioned("libcudnn.so.9.5.1", "libcudnn.so.") == "9.5.1");
  CHECK_FALSE(versioned("libcudnn.so.9.x", "libcudnn.so."));
  CHECK_FALSE(versioned("libcudnn.so.", "libcudnn.so."));
  CHECK(lib_dist("nvidia_cudnn_cu12-9.5.1.17.dist-info", "nvidia_cudnn", false) == "9.5.1.17");
  CHECK(lib_dist("tensorrt_cu12_libs-10.3.0.dist-info", "tensorrt", true) == "10.3.0");
  CHECK(lib_dist("tensorrt-10.3.0.dist-info", "tensorrt", true) == "10.3.0");
  CHECK_FALSE(lib_dist("nvidia_cudnn_cu12_libs-9.5.dist-info", "nvidia_cudnn", false));
  CHECK_FALSE(lib_dist("nvidia_cudnn_frontend-1.0.dist-info", "nvidia_cudnn", false));
  CHECK(venv_version("home = /usr/bin\nversion = 3.11.2\n") == "3.11");
  CHECK(venv_version("  version_info = 3.12.1.final.0\n") == "3.12");
  CHECK_FALSE(venv_version("home = /usr/bin\nversionx = 3.11\n"));
  CHECK(py_string_var("full_version = '3.2.0'\ncuda_version = '12.6'\ncudnn_version = '9.5.1'\n", "cuda_version") ==
        "12.6");
  CHECK(py_string_var("cuda_version = 'False'", "cudnn_version").empty());
}
