// A nightly report (a shard's nightly.json, the input of merge, collect and promote): read into the
// typed model or refused with one line, never a crash; what is read writes back out.
#include "core/json_file.h"
#include "fuzz/fuzz_common.h"
#include "nightly/nightly_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s = imgtool::fuzz::text(data, size);
  imgtool::fuzz::expect_refusal_or_result([&] {
    auto j = imgtool::parse_json_text(s, "nightly.json", "a nightly report");
    try {
      auto r = j.get<imgtool::nightly::NightlyReport>();
      (void)nlohmann::json(r).dump();
      for (const auto& c : r.cells) (void)c.smoke.evidence_summary();
    } catch (const nlohmann::json::exception&) {  // a field of the wrong type: refused as read_report does
    }
  });
  return 0;
}
