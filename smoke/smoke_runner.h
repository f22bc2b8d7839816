// The smoke runner: runs smoke/probe/probe.py inside an image with
//   docker run --rm --name imgtool-smoke-<pid>-<n> --network none --cap-drop ALL
//       --security-opt no-new-privileges --pids-limit 4096 --log-driver none
//       [--gpus SPEC] [--shm-size S] [profile flags]
//       -v <probe dir>:/imgtool-probe:ro IMAGE <python> /imgtool-probe/probe.py
//       --gpus-requested SPEC|none [--expect-variant V] [--expect-cuda C] …
// The fence (network, capabilities, privileges, pids, output) is the engine's, on every
// container (engine/engine.h: Isolation); the probe needs none of what it takes away. A run
// profile's flags that would widen it (ipc: host, say) are left out and named in the warnings:
// the profile says how a workload runs, the smoke judges an image nobody has vetted yet. Each
// output stream is kept up to 4 MiB (engine::kMaxRunOutput): a flooded stdout is the
// `output_cut` diagnosis, a flooded stderr a warning.
// and turns the outcome into a SmokeResult: the probe's JSON document, the
// host-side diagnosis when docker itself failed, and a verdict.
//
// The image is never modified (the probe is mounted read-only). The expected
// variant and CUDA default to the image's io.imgtool.variant / io.imgtool.cuda
// labels. Verdict rules (the probe applies them, probe.py `verdict`; imgtool applies them again
// from the sections, evidence.h `recheck_document`, and the document can only lower the verdict):
//   gpu image: passes only with a working GPU (driver, PTX kernels, cuBLAS) and a GPU Paddle whose
//              result checks are right on the GPU (run_check's "works well" is not a result);
//   cpu image: passes when Paddle imports and run_check works on CPU;
//   /dev/shm below 1 GiB is a WARNING, not a failure: it is a `docker run`
//              setting (--shm-size / --ipc=host), not a property of the image.
//   A docker failure (no NVIDIA runtime, driver too old, …) fails with its diagnosis.
#pragma once
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/process.h"
#include "engine/engine.h"
#include "matrix/label_claims.h"
#include "smoke/binding.h"
#include "smoke/evidence.h"
#include "smoke/gpu_host.h"
#include "smoke/smoke_diagnosis.h"

namespace imgtool::smoke {

struct SmokeOptions {
  std::string image;                // any reference `docker run` accepts
  std::string gpus = "none";        // "none": no --gpus flag; "auto": all for gpu images, none for cpu; else the value
  GpuHost gpu_host = GpuHost::gpu;  // what the host offers (gpu_host.h): the probe's --gpu-host and what auto means
  std::string shm_size;             // empty: Docker's default (64 MB)
  std::string expect_variant;       // "gpu" | "cpu"; empty: the io.imgtool.variant label
  std::string expect_cuda;          // "12.6"; empty: the io.imgtool.cuda label
  std::string expect_archs;         // "sm_61,…"; empty: the io.imgtool.cuda-archs label
  std::string python = "python3";   // the image's interpreter (a venv's python3 on PATH wins)
  std::string probe_dir;            // empty: data_dir() + "/smoke/probe"
  std::chrono::seconds timeout{900};    // whole docker run
  std::vector<std::string> probe_args;  // passed through to probe.py (e.g. --reps 5)
  std::vector<std::string> run_flags;   // extra docker run flags from a run profile (ulimits, user, env, limits)
  // The host's own GPU list (host_gpus.h) for a run with --gpus on a GPU host; nullopt: run_smoke
  // asks nvidia-smi itself. Tests set it; nothing read from the image ever does.
  std::optional<std::vector<HostGpu>> host_gpus;
};

// What `docker image inspect` says about the image (labels are the claims).
struct ImageFacts {
  std::string ref;               // as given
  std::string id;                // "sha256:…" image ID
  std::string digest;            // first RepoDigest ("repo@sha256:…"), else the ID
  std::string tag;               // io.imgtool.tag, else the reference as given
  std::string variant;           // io.imgtool.variant
  std::string cuda;              // io.imgtool.cuda
  std::string cuda_archs;        // io.imgtool.cuda-archs: the probe names a missing kernel image with it
  matrix::LabelClaims claims;    // every io.imgtool.* label: what a document is bound against (binding.h)
  std::vector<std::string> env;  // the image config's Env ("K=V"): what the runtime's hooks see
  std::string created;           // RFC 3339, as the engine reports it
};

struct SmokeResult {
  std::vector<std::string> argv;  // the docker command that ran
  int docker_exit = -1;
  bool timed_out = false;
  std::string docker_stderr;          // container stderr included (probe logs go there)
  std::optional<HostDiagnosis> host;  // set when docker failed before/around the probe
  nlohmann::json probe;               // the probe's document; null when none came back
  ImageFacts image;
  RunFacts run;                             // what imgtool knows of the run (evidence.h), not the document's word
  std::string expect_variant, expect_cuda;  // after label defaults
  std::string verdict = "fail";             // "pass" | "fail"
  std::vector<std::string> reasons;         // why it failed
  std::vector<std::string> warnings;
  // Where the document contradicts the image it ran in (binding.h); evidence is attested only
  // when this is empty, and the nightly fails the smoke on any line.
  std::vector<std::string> binding;
  bool passed() const { return verdict == "pass"; }
  nlohmann::json to_json() const;
};

// The engine's facts of the image (engine::Engine::inspect); throws Error
// (image missing; engine unreachable: retryable).
ImageFacts inspect_image(const std::string& image, engine::Engine& docker);

// The probe's run for `opt` (expectations already resolved); `name` is the container name.
engine::RunRequest smoke_request(const SmokeOptions& opt, const std::string& name);

// The docker run argv of smoke_request() (engine::run_argv): what the report shows.
std::vector<std::string> docker_run_argv(const SmokeOptions& opt, const std::string& name);

// Inspects the image, runs the probe, judges, all on `docker`, the caller's
// engine (no default). Throws InputError for bad options (unknown variant), Error
// when the image cannot be inspected; every failure of the run itself is
// reported in the result, never thrown (a timed-out container is removed by the engine).
SmokeResult run_smoke(SmokeOptions opt, engine::Engine& docker);

// Folds docker's outcome and the probe's output into `res` (exposed for tests).
void judge_smoke(SmokeResult& res, const RunResult& docker);

// The probe writes its document between these two lines; anything outside them is log.
inline constexpr const char* kDocumentBegin = "-----BEGIN IMGTOOL PROBE DOCUMENT-----";
inline constexpr const char* kDocumentEnd = "-----END IMGTOOL PROBE DOCUMENT-----";
// The document's text in a probe's output (a container's stdout, a Job's log): between the
// sentinel lines; without them, from the first '{' unless `require_sentinels`. nullopt: none.
std::optional<std::string_view> probe_document_text(std::string_view out, bool require_sentinels);

// What a document from this image is bound against: its labels, ID, creation time; the identity
// file is required of an image imgtool labelled (io.imgtool.tag).
BindingFacts binding_facts(const ImageFacts& f, const std::string& nonce = "");

}  // namespace imgtool::smoke
