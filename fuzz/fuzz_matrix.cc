// Matrix files (YAML, or JSON when the first byte is odd): read and validated against the
// shipped knowledge base, as `imgtool matrix` does before expanding.
#include "fuzz/fuzz_common.h"
#include "matrix/matrix_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto kb = imgtool::matrix::KnowledgeBase::load_default();
  if (size == 0) return 0;
  std::string name = (data[0] & 1) ? "fuzz.json" : "fuzz.yaml";
  imgtool::fuzz::expect_refusal_or_result(
      [&] { imgtool::matrix::read_matrix_text(imgtool::fuzz::text(data + 1, size - 1), name, kb); });
  return 0;
}
