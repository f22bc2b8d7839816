// The real nightly steps: smoke::smoke_and_judge (throughput records), verify::release_gate (whose
// scan also yields the SBOM inventory) and release::publish (the engine's save of the image ->
// docker:// by digest, signed, SBOM attested from that inventory, tag last). All on the same engine
// the build used.
#pragma once
#include <filesystem>
#include <memory>
#include <string>

#include "builder/nightly_steps.h"
#include "engine/engine.h"
#include "smoke/gpu_host.h"

namespace imgtool::builder {

struct RealStepsOptions {
  PublishTarget target;
  std::string key;                     // private signing key: a file (0600) or env://VAR (sign::load_signing_key)
  std::string passphrase_env;          // env var holding the key's passphrase; empty = none
  std::string gpus = "auto";           // docker run --gpus for the smoke (auto: all for gpu images)
  smoke::GpuHost gpu_host = smoke::GpuHost::gpu;  // what the smoke host offers (verify/gpu_host.h)
  std::string shm_size;                // docker run --shm-size for the smoke
  std::string records;                 // throughput records file; empty = verify's default
  std::string profile;                 // the run profile layers the smoke ran under (recorded in the evidence)
  std::string ca_file;                 // registry CA
  bool insecure_http = false;
  engine::Engine* engine = nullptr;    // smoke, gate and push read the image here; null = engine::local_engine()
};

// Loads the key now, so a bad key fails the run before any build (InputError).
std::unique_ptr<NightlySteps> make_real_steps(const RealStepsOptions& o);

}  // namespace imgtool::builder
