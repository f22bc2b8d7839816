// scan/dlopen_names: the library names a binary's C strings hold, in any chunking, bounded.
#include "scan/dlopen_names.h"

#include <doctest/doctest.h>

#include <random>

using namespace imgtool::scan;

namespace {

const std::string kRodata = std::string("\0\0GetCublasDsoHandle\0libcublas.so.12\0libnvrtc.so\0", 49) +
                            std::string("libnccl.so;libnccl.so.2\0%s not found\0libfoo.so.x\0\x01libbar.so\0", 61) +
                            std::string("/usr/local/cuda/lib64/libcudnn.so\0libcuda.so\0lib.so\0libtail.so", 62);

std::set<std::string> names_of(const std::string& bytes, size_t chunk) {
  DlopenNames s;
  for (size_t at = 0; at < bytes.size(); at += chunk) s.feed(bytes.data() + at, std::min(chunk, bytes.size() - at));
  s.finish();
  return s.names();
}

}  // namespace

TEST_CASE("dlopen names: the C strings that are library names, whatever the chunking") {
  std::set<std::string> want = {"libcublas.so.12", "libcuda.so", "libnccl.so", "libnccl.so.2", "libnvrtc.so"};
  for (size_t chunk : {1, 2, 3, 7, 64, 4096}) CHECK(names_of(kRodata, chunk) == want);
  CHECK(is_library_name("libcublasLt.so.12"));
  CHECK(is_library_name("libnvtx3interop.so.1"));
  CHECK_FALSE(is_library_name("libcudnn.so."));
  CHECK_FALSE(is_library_name("libcudnn.so.9a"));
  CHECK_FALSE(is_library_name("/usr/lib/libc.so.6"));
  CHECK_FALSE(is_library_name("lib.so"));
}

TEST_CASE("dlopen names: a short name built in code leaves its head as a movabs immediate") {
  // As GCC compiles std::string("libcublas.so") in paddlepaddle-gpu 2.6.2's libphi.so:
  // movabs $"libcubla", %rdx; push %rbp; ... (bytes read off that library).
  std::string code = std::string(
                         "\x00\x00\x48\xba"
                         "libcubla"
                         "\x55\xc5\xf9\xef\xc0",
                         17) +
                     std::string(
                         "\x48\xb9"
                         "libcudnn"
                         "\xc6\x04\x18\x00",
                         14) +
                     std::string(
                         "\x48\xba"
                         "notalib!"
                         "\x48\xbb"
                         "lib\x01"
                         "abcd",
                         20);
  for (size_t chunk : {1, 3, 64}) {
    DlopenNames s;
    for (size_t at = 0; at < code.size(); at += chunk) s.feed(code.data() + at, std::min(chunk, code.size() - at));
    s.finish();
    CHECK(s.heads() == std::set<std::string>{"libcubla", "libcudnn"});
    CHECK(s.names().empty());
  }
}

TEST_CASE("dlopen names: names inside a literal pool without NULs are embedded names") {
  std::string pool = std::string("\x01Specify path for libnvToolsExt.solibcupti.so.12 el.slibnvToolsExt.so\x02", 70);
  for (size_t chunk : {1, 5, 4096}) {
    DlopenNames s;
    for (size_t at = 0; at < pool.size(); at += chunk) s.feed(pool.data() + at, std::min(chunk, pool.size() - at));
    s.finish();
    CHECK(s.embedded() == std::set<std::string>{"libcupti.so.12", "libnvToolsExt.so"});
    CHECK(s.names().empty());  // none is a whole C string
  }
}

TEST_CASE("dlopen names: memory is bounded; an overlong run and noise are no names") {
  std::string run(DlopenNames::kMaxRun + 10, 'a');
  CHECK(names_of(std::string("\0", 1) + run + "libx.so" + std::string("\0", 1), 5).empty());
  DlopenNames s;
  for (int i = 0; i < 2000; ++i) {
    std::string n = "libn" + std::to_string(i) + ".so";
    s.feed(n.c_str(), n.size() + 1);
  }
  CHECK(s.names().size() == DlopenNames::kMaxNames);
  CHECK(s.truncated());
  std::mt19937 rng(7);
  std::string noise(1 << 16, '\0');
  for (auto& c : noise) c = static_cast<char>(rng());
  DlopenNames n;
  n.feed(noise.data(), noise.size());
  CHECK(n.names().size() < 5);  // random bytes rarely spell lib….so between NULs
}
