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
