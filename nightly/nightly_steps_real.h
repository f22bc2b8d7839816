// The real nightly steps: smoke::smoke_and_judge (throughput records), verify::release_gate (whose
// scan also yields the SBOM inventory) and release::publish (the engine's save of the image ->
// docker:// by digest, signed, SBOM attested from that inventory, tag last). All on the same engine
// the build used.
#pragma once
#include <filesystem>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "image/transport.h"
#include "matrix/kb.h"
#include "nightly/nightly_steps.h"
#include "smoke/smoke_judge.h"

namespace imgtool::nightly {

struct RealStepsOptions {
  image::Reference target;     // the registry namespace (parse_registry)
  std::string key;             // private signing key: a file (0600) or env://VAR (sign::load_signing_key)
  std::string passphrase_env;  // env var holding the key's passphrase; empty = none
  smoke::SmokeOptions smoke{.gpus = "auto"};  // the smoke's run (gpus, host, shm, timeout, a run profile's flags
                                              // and probe args); `image` is set to each built image's ID
  smoke::RecordOptions records;               // throughput store and judgement; records "" = the default file
  std::string profile;                        // the run profile layers the smoke ran under (recorded in the evidence)
  image::TransportOptions transport;          // the registry's TLS/http options and the run's registry session
  engine::Engine* engine = nullptr;           // smoke, gate and push read the image here (the run's one); required
  const matrix::KnowledgeBase* kb = nullptr;  // the gate's facts (the run's one KB); required
};

// Loads the key now, so a bad key fails the run before any build (InputError).
std::unique_ptr<NightlySteps> make_real_steps(const RealStepsOptions& o);

}  // namespace imgtool::nightly
