// Image references (docker://, docker-daemon:, oci:) and the bare Docker name grammar.
#include "core/refname.h"
#include "fuzz/fuzz_common.h"
#include "image/reference.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s = imgtool::fuzz::text(data, size);
  imgtool::fuzz::expect_refusal_or_result([&] {
    // An accepted reference prints (str) as text that reads back to the same reference.
    auto r = imgtool::image::parse_reference(s);
    auto back = imgtool::image::parse_reference(r.str());
    if (back.str() != r.str() || back.name != r.name || back.tag != r.tag || back.digest != r.digest) __builtin_trap();
  });
  (void)imgtool::refname::check_name(s, true);
  return 0;
}
