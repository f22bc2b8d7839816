// DSSE envelopes as attestations carry them: the strict parser must refuse, never crash; what it
// accepts must serialize to an envelope it accepts again with the same fields; verification of a
// parsed envelope (any bytes as signatures) is a yes or a no, never a throw.
#include <cstdlib>

#include "fuzz/fuzz_common.h"
#include "sign/dsse.h"
#include "sign/keys.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static imgtool::sign::Pkey key = imgtool::sign::generate_key();
  std::string s = imgtool::fuzz::text(data, size);
  imgtool::fuzz::expect_refusal_or_result([&] {
    auto e = imgtool::sign::parse_envelope(s);
    auto again = imgtool::sign::parse_envelope(e.serialize());
    if (again.payload_type != e.payload_type || again.payload != e.payload ||
        again.signatures.size() != e.signatures.size())
      std::abort();
    for (size_t i = 0; i < e.signatures.size(); ++i)
      if (again.signatures[i].sig != e.signatures[i].sig || again.signatures[i].keyid != e.signatures[i].keyid)
        std::abort();
    (void)imgtool::sign::verify_envelope(*key, e);
  });
  return 0;
}
