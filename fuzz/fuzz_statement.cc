// in-toto statements (the payload of an attestation's DSSE envelope): the parser must refuse, never
// crash; what it accepts must serialize to a statement it accepts again with the same type,
// predicate type, subjects and predicate, and answer names_digest() without throwing.
#include <cstdlib>

#include "fuzz/fuzz_common.h"
#include "sign/attestation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s = imgtool::fuzz::text(data, size);
  imgtool::fuzz::expect_refusal_or_result([&] {
    auto st = imgtool::sign::parse_statement(s);
    auto again = imgtool::sign::parse_statement(st.serialize());
    if (again.type != st.type || again.predicate_type != st.predicate_type || again.predicate != st.predicate ||
        again.subjects.size() != st.subjects.size())
      std::abort();
    for (size_t i = 0; i < st.subjects.size(); ++i)
      if (again.subjects[i].name != st.subjects[i].name || again.subjects[i].sha256 != st.subjects[i].sha256)
        std::abort();
    (void)st.names_digest("sha256:" + std::string(64, '0'));
  });
  return 0;
}
