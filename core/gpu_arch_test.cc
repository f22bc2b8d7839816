// core/gpu_arch: architecture lists and CUDA's rules for which GPU runs which code.
#include "core/gpu_arch.h"

#include <doctest/doctest.h>

using namespace imgtool;

TEST_CASE("arch lists: parse and print round trip; runnable_on follows CUDA's compatibility rules") {
  CHECK(parse_arch("sm_86") == 86);
  CHECK(parse_arch("compute_90") == 90);
  CHECK(parse_arch("8.6") == 86);
  CHECK(parse_arch("10.0") == 100);
  CHECK(parse_arch("12.1") == 121);
  CHECK_FALSE(parse_arch("sm_"));
  CHECK_FALSE(parse_arch("sm_x6"));
  CHECK_FALSE(parse_arch("9"));
  auto c = parse_archs("sm_61,sm_70,sm_75,sm_80,sm_86,compute_86");
  REQUIRE(c);
  CHECK(c->text() == "sm_61,sm_70,sm_75,sm_80,sm_86,compute_86");
  CHECK(c->runnable_on(89) == 1);  // sm_86 cubin (same major) and the PTX
  CHECK(c->runnable_on(90) == 1);  // PTX JIT only
  CHECK(c->runnable_on(120) == 1);
  auto sass = parse_archs("sm_61,sm_70,sm_75,sm_80,sm_86");
  CHECK(sass->runnable_on(90) == 0);  // no sm_90 cubin, no PTX: "no kernel image is available"
  CHECK(sass->runnable_on(52) == 0);
  CHECK_FALSE(parse_archs("sm_61,,sm_70"));
  CHECK_FALSE(parse_archs("61"));
  CHECK(cc_text(90) == "9.0");
  CHECK(cc_text(121) == "12.1");
}

TEST_CASE("kernel_gap: the reason a GPU cannot run an image's code, empty when it can or nothing is known") {
  std::string paddle262 = "sm_61,sm_70,sm_75,sm_80,sm_86";
  CHECK(kernel_gap(paddle262, "8.0").empty());
  CHECK(kernel_gap(paddle262, "8.9").empty());  // Ada runs the sm_86 cubins
  CHECK(kernel_gap(paddle262, "9.0") ==
        "its GPU code is sm_61,sm_70,sm_75,sm_80,sm_86 (machine code only, no PTX to JIT-compile): nothing runs on "
        "compute "
        "capability 9.0 (\"no kernel image is available for execution on the device\")");
  CHECK_FALSE(kernel_gap(paddle262, "12.0").empty());     // RTX 50 / Blackwell on an older build
  CHECK(kernel_gap("sm_80,compute_80", "12.0").empty());  // PTX: the driver JIT-compiles it
  CHECK(kernel_gap("", "9.0").empty());
  CHECK(kernel_gap(paddle262, "").empty());
}

TEST_CASE("a/f variants: sm_XYa runs on X.Y only, sm_XYf on the family; PTX variants no further than their cubins") {
  auto e = parse_arch_entry("sm_100a");
  REQUIRE(e);
  CHECK(arch_number(e->key) == 100);
  CHECK((e->key & kArchSpecific));
  CHECK_FALSE(e->ptx);
  CHECK(parse_arch_entry("compute_100f")->ptx);
  CHECK_FALSE(parse_arch_entry("sm_100x"));
  CHECK_FALSE(parse_arch_entry("sm_8.6"));
  CHECK_FALSE(parse_arch("sm_90a"));  // a compute capability has no variant
  // The B300 (10.3) cannot run sm_100a code; the B200 (10.0) can; sm_100f serves both.
  auto a = parse_archs("sm_90a,sm_100a");
  REQUIRE(a);
  CHECK(a->text() == "sm_90a,sm_100a");
  CHECK(a->runnable_on(90) == 1);
  CHECK(a->runnable_on(100) == 1);
  CHECK(a->runnable_on(103) == 0);
  CHECK(a->runnable_on(91) == 0);
  auto f = parse_archs("sm_100f,sm_120f");
  CHECK(f->runnable_on(100) == 1);
  CHECK(f->runnable_on(103) == 1);
  CHECK(f->runnable_on(121) == 1);
  CHECK(f->runnable_on(110) == 0);  // another family
  CHECK(f->runnable_on(90) == 0);
  auto pa = parse_archs("compute_90a");
  CHECK(pa->runnable_on(90) == 1);
  CHECK(pa->runnable_on(100) == 0);  // arch-specific PTX does not carry forward
  CHECK(parse_archs("compute_90")->runnable_on(100) == 1);
  CHECK(kernel_gap("sm_80,sm_90a,sm_100a", "10.3") ==
        "its GPU code is sm_80,sm_90a,sm_100a (machine code only, no PTX to JIT-compile); arch-specific sm_100a runs "
        "on its own compute capability only: nothing runs on compute capability 10.3 (\"no kernel image is available "
        "for execution on the device\")");
  CHECK(kernel_gap("sm_80,sm_90a,sm_100a", "10.0").empty());
  CHECK(kernel_gap("sm_80,sm_100f", "10.3").empty());
}
