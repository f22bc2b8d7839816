// A package index's answers (PyPI's JSON API, a PEP 503 page) as `kb check` reads them: one
// refusal line or a result, never a crash -- a few hundred KB of nesting included.
#include "fuzz/fuzz_common.h"
#include "kb/index_page.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s = imgtool::fuzz::text(data, size);
  imgtool::fuzz::expect_refusal_or_result(
      [&] { (void)imgtool::kb::read_pypi_json(s, "https://pypi.org/pypi/p/json", "p"); });
  imgtool::fuzz::expect_refusal_or_result(
      [&] { (void)imgtool::kb::read_simple_page(s, "https://www.paddlepaddle.org.cn/packages/stable/cu126/p/", "p"); });
  return 0;
}
