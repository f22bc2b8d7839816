// Image config blobs (image/config.h) as a registry serves them: typed once, or one refusal.
#include "fuzz/fuzz_common.h"
#include "image/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s = imgtool::fuzz::text(data, size);
  imgtool::fuzz::expect_refusal_or_result([&] {
    imgtool::image::ImageConfig c = imgtool::image::parse_image_config(s, "image config");
    (void)c.env_map();
    (void)c.label("io.imgtool.paddle");
  });
  return 0;
}
