// Image references (docker://, docker-daemon:, oci:) and the bare Docker name grammar.
#include "core/refname.h"
#include "fuzz/fuzz_common.h"
#include "image/reference.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s = imgtool::fuzz::text(data, size);
  imgtool::fuzz::expect_refusal_or_result([&] { imgtool::image::parse_reference(s); });
  (void)imgtool::refname::check_name(s, true);
  return 0;
}
