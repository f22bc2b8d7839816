// Manifest and descriptor JSON as a registry or an OCI layout serves it.
#include "fuzz/fuzz_common.h"
#include "image/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  imgtool::image::Manifest m{imgtool::fuzz::text(data, size), ""};
  imgtool::fuzz::expect_refusal_or_result([&] { m.config(); });
  imgtool::fuzz::expect_refusal_or_result([&] { m.layers(); });
  return 0;
}
