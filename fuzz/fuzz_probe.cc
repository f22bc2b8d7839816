// A probe's output as an image (or a Job's log) prints it: whatever the bytes, the smoke judges
// them, makes evidence, binds them to an image and reads pod facts without crashing; every
// string that comes back is printable. One hostile image must never kill the nightly.
#include <cstdlib>

#include "core/json_file.h"
#include "fuzz/fuzz_common.h"
#include "smoke/binding.h"
#include "smoke/evidence.h"
#include "smoke/pod_facts.h"
#include "smoke/smoke_runner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool::smoke;
  std::string s = imgtool::fuzz::text(data, size);
  SmokeResult res;
  res.expect_variant = size % 2 ? "gpu" : "cpu";
  res.run = {.mode = GpuHost::gpu, .gpus_passed = true, .host_gpus = std::vector<HostGpu>{{"GPU-1", "x", "1"}}};
  judge_smoke(res, {0, false, s, ""});
  (void)res.to_json().dump();
  SmokeEvidence e = evidence_of_run(res.probe, res.run, res.expect_variant);
  (void)to_predicate(e).dump();
  if (e.summary().find('\x1b') != std::string::npos) std::abort();
  (void)evidence_from_probe(res.probe, "fuzz");
  imgtool::matrix::LabelClaims c;
  c.tag = "t", c.variant = "gpu", c.cuda = "12.6", c.cuda_archs = "sm_80,sm_90a", c.python = "3.11", c.paddle = "3.2.0";
  (void)binding_contradictions(res.probe, {.claims = c, .image_id = "sha256:x", .created = 1, .nonce = "n"}, 2);
  auto doc = imgtool::parse_json_or_discarded(s);
  if (!doc.is_discarded()) imgtool::fuzz::expect_refusal_or_result([&] { (void)pod_facts(doc, doc, "fuzz.pod"); });
  return 0;
}
