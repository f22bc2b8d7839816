// The smoke runner: runs verify/probe/probe.py inside an image with
//   docker run --rm --name imgtool-smoke-<pid>-<n> [--gpus SPEC] [--shm-size S]
//       -v <probe dir>:/imgtool-probe:ro IMAGE <python> /imgtool-probe/probe.py
//       --gpus-requested SPEC|none [--expect-variant V] [--expect-cuda C] …
// and turns the outcome into a SmokeResult: the probe's JSON document, the
// host-side diagnosis when docker itself failed, and a verdict.
//
// The image is never modified (the probe is mounted read-only). The expected
// variant and CUDA default to the image's io.imgtool.variant / io.imgtool.cuda
// labels. Verdict rules (the probe applies them; see probe.py `verdict`):
//   gpu image: passes only with a working GPU (driver, PTX kernels, cuBLAS) and a
//              GPU Paddle whose run_check says "works well on 1 GPU";
//   cpu image: passes when Paddle imports and run_check works on CPU;
//   /dev/shm below 1 GiB is a WARNING, not a failure: it is a `docker run`
//              setting (--shm-size / --ipc=host), not a property of the image.
//   A docker failure (no NVIDIA runtime, driver too old, …) fails with its diagnosis.
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/engine.h"
#include "core/process.h"
#include "verify/smoke_diagnosis.h"

namespace imgtool::verify {

struct SmokeOptions {
  std::string image;                   // any reference `docker run` accepts
  std::string gpus = "none";           // "none": no --gpus flag; "auto": all for gpu images, none for cpu; else the value
  bool no_gpu_host = false;            // the host has no GPU: probe --no-gpu-host, and auto = none
  std::string shm_size;                // empty: Docker's default (64 MB)
  std::string expect_variant;          // "gpu" | "cpu"; empty: the io.imgtool.variant label
  std::string expect_cuda;             // "12.6"; empty: the io.imgtool.cuda label
  std::string python = "python3";      // the image's interpreter (a venv's python3 on PATH wins)
  std::string probe_dir;               // empty: data_dir() + "/verify/probe"
  std::chrono::seconds timeout{900};   // whole docker run
  std::vector<std::string> probe_args; // passed through to probe.py (e.g. --reps 5)
  std::vector<std::string> run_flags;  // extra docker run flags from a run profile (ulimits, user, env, limits)
};

// What `docker image inspect` says about the image (labels are the claims).
struct ImageFacts {
  std::string ref;      // as given
  std::string id;       // "sha256:…" image ID
  std::string digest;   // first RepoDigest ("repo@sha256:…"), else the ID
  std::string tag;      // io.imgtool.tag, else the reference as given
  std::string variant;  // io.imgtool.variant
  std::string cuda;     // io.imgtool.cuda
};

struct SmokeResult {
  std::vector<std::string> argv;           // the docker command that ran
  int docker_exit = -1;
  bool timed_out = false;
  std::string docker_stderr;               // container stderr included (probe logs go there)
  std::optional<HostDiagnosis> host;       // set when docker failed before/around the probe
  nlohmann::json probe;                    // the probe's document; null when none came back
  ImageFacts image;
  std::string expect_variant, expect_cuda; // after label defaults
  std::string verdict = "fail";            // "pass" | "fail"
  std::vector<std::string> reasons;        // why it failed
  std::vector<std::string> warnings;
  bool passed() const { return verdict == "pass"; }
  nlohmann::json to_json() const;
};

// Runs argv with options; the real one is imgtool::run. Tests inject fakes.
using CommandRunner = std::function<RunResult(const std::vector<std::string>&, const RunOptions&)>;

// `docker image inspect`; throws Error (image missing, docker unreachable).
ImageFacts inspect_image(const std::string& image, const CommandRunner& runner);

// The docker run argv for `opt` (expectations already resolved); `name` is the container name.
std::vector<std::string> docker_run_argv(const SmokeOptions& opt, const std::string& name);

// Inspects the image, runs the probe, judges. Throws InputError for bad options
// (unknown variant), Error when the image cannot be inspected; every failure
// of the run itself is reported in the result, never thrown.
SmokeResult run_smoke(SmokeOptions opt, const CommandRunner& runner = run_docker);

// Folds docker's outcome and the probe's output into `res` (exposed for tests).
void judge_smoke(SmokeResult& res, const RunResult& docker);

}  // namespace imgtool::verify
