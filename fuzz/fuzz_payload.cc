// cosign simple-signing payloads: the strict parser must refuse, never crash; what it
// accepts must serialize to something it accepts again with the same fields.
#include <cstdlib>

#include "fuzz/fuzz_common.h"
#include "sign/payload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s = imgtool::fuzz::text(data, size);
  imgtool::fuzz::expect_refusal_or_result([&] {
    auto p = imgtool::sign::parse_payload(s);
    auto again = imgtool::sign::parse_payload(p.serialize());
    if (again.docker_reference != p.docker_reference || again.manifest_digest != p.manifest_digest ||
        again.optional != p.optional)
      std::abort();
  });
  return 0;
}
