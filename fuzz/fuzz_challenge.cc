// WWW-Authenticate header values (what any registry, or a man in the middle, may send).
#include "fuzz/fuzz_common.h"
#include "image/auth.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s = imgtool::fuzz::text(data, size);
  imgtool::fuzz::expect_refusal_or_result([&] {
    imgtool::image::parse_challenges(s);
    imgtool::image::base64_decode(s);
  });
  return 0;
}
