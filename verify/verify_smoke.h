// The GPU smoke part of `imgtool verify REF --key PUB`: runs after the static
// checks and the SBOM rows (verify_image.h calls it) and appends its rows to the same Report.
//
// Steps
//   1. Trust: when the report already has a failed "signature" row, the image is
//      NOT run (a "smoke" skip row says why; the signature row fails the run).
//   2. Local image: the smoke runs in the local Docker engine.
//        docker-daemon:NAME:TAG  smoked directly;
//        docker:// and oci:      an image whose ID equals the manifest's config digest
//                                (same config = same diff_ids = same contents) is reused;
//                                otherwise the checked manifest (pinned: the blobs it
//                                names, re-hashed by digest) is loaded with the copy
//                                engine into docker-daemon: under a temporary name
//                                imgtool-verify/<repo>:<12 hex of the manifest digest>-<pid>,
//                                removed again afterwards (`docker image rm`).
//      Every engine call (inspect, load, run, remove) goes to VerifySmokeOptions::engine.
//      The loaded image's ID must equal the config digest (else a "smoke.load" fail).
//   3. Run: run_smoke() (smoke/smoke_runner.h) with the options' SmokeOptions (the image set to the
//      local one); --gpus "auto" follows smoke::resolve_gpus (smoke/gpu_host.h): the host's GPUs
//      for images labelled io.imgtool.variant=gpu, "none" otherwise.
//   4. Throughput: the probe's metrics are recorded and judged (records_judge.h);
//      a failed judgement fails the verdict.
//   5. Rows: "smoke.load" (how the image got there), "smoke.host" (docker failed
//      to start the probe: diagnosis + fix), "smoke.<section>" for each probe
//      section (environment, shm, libraries, driver, compat, kernels, blas, paddle),
//      "smoke.throughput.<metric>", and "smoke" (the verdict). A section fails
//      exactly when the probe's verdict names it; otherwise ok -> pass, warn -> warn,
//      skipped -> skip, and a probe "fail" the verdict does not count -> warn. So the
//      report passes iff the static checks passed and the smoke verdict is "pass".
#pragma once
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "image/reference.h"
#include "image/transport.h"
#include "smoke/records_judge.h"
#include "smoke/smoke_judge.h"
#include "smoke/smoke_runner.h"
#include "verify/static_checks.h"

namespace imgtool::verify {

struct VerifySmokeOptions {
  smoke::SmokeOptions smoke{.gpus = "auto"};  // the probe's run (gpus, host, shm, timeout, profile flags and
                                              // probe args, probe dir); `image` is set to the local image
  smoke::RecordOptions records;               // store + judge throughput (records file, clock, peaks)
  bool require_signature = true;              // never run an image whose signature row failed
  image::TransportOptions transport;          // to read docker:// / oci: images for loading
  engine::Engine* engine =
      nullptr;  // inspect, load, run, remove: the command's one engine (tests: FakeEngine); required
  std::function<void(const std::string&)> log;  // progress lines (stderr in the CLI)
};

// imgtool-verify/<repo>:<12 hex of digest>-<pid>, a valid docker name for any reference.
std::string temporary_name(const image::Reference& r, const std::string& manifest_digest);

// Report rows for a finished smoke run (exposed for tests).
std::vector<CheckResult> smoke_rows(const smoke::SmokeResult& res, const std::vector<smoke::Judgement>& throughput);

// The whole smoke part for one verified manifest; never throws for a failed
// step (each becomes a row), only for bad options (InputError).
void verify_smoke(const std::string& ref, const image::Manifest& m, Report& report, const VerifySmokeOptions& o);

}  // namespace imgtool::verify
