// A wheel as `kb derive` reads it: the zip by its central directory (kb/zip.h), the facts
// (kb/wheel.h), the rows (kb/derive.h). One refusal line or rows, never a crash; the rows' YAML
// must parse back with one top-level entry and their JSON must serialise (valid UTF-8), whatever
// the wheel's strings hold. A small inflate budget keeps each run short.
#include <yaml-cpp/yaml.h>

#include <cstdlib>

#include "fuzz/fuzz_common.h"
#include "kb/derive.h"
#include "kb/wheel.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  imgtool::fuzz::expect_refusal_or_result([&] {
    auto w = imgtool::kb::read_wheel_bytes(bytes, "fuzz.whl", {.max_inflated = 1 << 20});
    auto d = imgtool::kb::derive(w);
    YAML::Node y = YAML::Load(imgtool::kb::render_yaml(d));
    if (y.size() != 1) std::abort();
    (void)imgtool::kb::to_json(d).dump();
  });
  return 0;
}
