// Hardware evidence: what a smoke of one image ran on, as a signed in-toto statement attached to the
// image digest (cosign's attestation layout, sign/attestation.h, like the SBOM) so the registry
// itself says whether a GPU tag was ever run on a GPU.
//
// Predicate type kSmokePredicateType; the predicate (to_predicate / from_predicate, strict):
//   {"host": "hardware"|"test-double"|"none",
//    "devices": [{"name", "cc": "9.0", "driver", "cuda_driver"}…],
//    "argv": [the docker run argv actually used], "gpus", "shm_size", "profile",
//    "sections": [{"name", "status", "reason"}…]  (every probe section, by name),
//    "metrics": [{"metric", "value", "unit", "device"}…],
//    "verdict": "pass"|"fail", "probe_version", "time" (the probe's start, UTC),
//    "source": "" | "replayed: FILE" | "collected: FILE"  (anything but a smoke run here says so)}
//
// The host kind and the verdict are imgtool's, never the document's word (the document comes from
// the image; an image can print an H100). For a run imgtool made itself (evidence_of_run):
//   none         no --gpus on the run, or --gpu-host none, or the probe saw no device, or its kernels
//                did not run, or nothing outside the container vouches for the devices;
//   test-double  --gpu-host test-double, or a device is imgtool's driver double (tests/gpu_engine);
//   hardware     --gpus was passed on a GPU host and every device the probe reports is, by UUID, one
//                the host itself reports outside the container (smoke/host_gpus.h: NVML through
//                nvidia-smi) on the same driver -- or, for a Kubernetes Job (nightly collect), the pod
//                the API server names ran the published digest on a node whose GPU product and
//                granted nvidia.com/gpu cover the devices.
// The document can lower the kind (a device of the double, kernels not run), never raise it.
// The verdict is recomputed from the sections (recheck_document): a gpu image's hardware evidence
// passes only with driver, kernels, BLAS and Paddle ok AND Paddle's result checks right on the GPU;
// run_check's "works well" is not a result. A document with Paddle skipped is never a hardware pass.
// Evidence made from a bare document (`imgtool evidence FILE`, a replay) is unbound: shown, never
// counted by the trust policy's hardware evidence (sign/policy.h: verify, promote, select).
#pragma once
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "smoke/gpu_host.h"
#include "smoke/host_gpus.h"

namespace imgtool::smoke {

inline constexpr const char* kSmokePredicateType = "https://imgtool.dev/attestations/gpu-smoke/v1";
inline constexpr const char* kTestDoubleDevice = "imgtool fake GPU (test double, not hardware)";

enum class HostKind { hardware, test_double, none };
const char* to_string(HostKind k);

struct EvidenceDevice {
  std::string name, cc, driver, cuda_driver, uuid;  // uuid: "GPU-…" as the probe read it (cuDeviceGetUuid)
};
struct EvidenceSection {
  std::string name, status, reason;
};
struct EvidenceMetric {
  std::string metric, unit, device;
  double value = 0;
};

// The Kubernetes pod a collected document came from, as the API server reports it
// (`kubectl get pod -o json`), never as the log says.
struct PodFacts {
  std::string name, node, gpu_product;  // gpu_product: the node's nvidia.com/gpu.product label
  std::string image_id;                 // the container's imageID (…@sha256:…)
  int gpus = 0;                         // nvidia.com/gpu granted (limits)
  std::string nonce;                    // the --nonce in the container's args
};

// What imgtool itself knows of a smoke run.
struct RunFacts {
  GpuHost mode = GpuHost::gpu;
  bool gpus_passed = false;                       // --gpus was on the docker run
  std::optional<std::vector<HostGpu>> host_gpus;  // the host's own list; nullopt: not read
  std::optional<PodFacts> pod;                    // a Kubernetes Job's pod (nightly collect)
};

nlohmann::json to_json(const RunFacts& r);
RunFacts run_facts_from_json(const nlohmann::json& j);

HostKind host_kind(const RunFacts& run, const std::vector<EvidenceDevice>& devices, bool kernels_ran,
                   std::string* why = nullptr);

// imgtool's reasons to fail a probe document for an image of `variant` judged on `host` (empty:
// it passes): the document's own verdict, then the sections it rests on, then Paddle's results.
std::vector<std::string> recheck_document(const nlohmann::json& probe, const std::string& variant, HostKind host);

struct SmokeEvidence {
  HostKind host = HostKind::none;
  bool bound = false;    // made by imgtool from a run it made or a pod it checked; false: a bare document
  std::string host_why;  // why the kind is not hardware when a GPU was asked for ("" otherwise)
  std::string attested;  // when imgtool signed it (its own clock, UTC): attestations are ordered by it
  std::string nonce;     // the per-run nonce the probe echoed (Kubernetes Jobs)
  std::string image;     // the image (config digest) the probe ran in, as imgtool knows it
  std::optional<PodFacts> pod;
  std::vector<std::string> checks;  // Paddle's result checks: "add gpu:0 ok", "relu gpu:0 WRONG got … want …"
  std::vector<EvidenceDevice> devices;
  std::vector<std::string> argv;
  std::string gpus, shm_size, profile;
  std::vector<EvidenceSection> sections;
  std::vector<EvidenceMetric> metrics;
  std::string verdict, probe_version, time;
  std::string source;  // "" = smoked by this run; "replayed: FILE", "collected: FILE"
  bool hardware_pass() const { return bound && host == HostKind::hardware && verdict == "pass"; }
  // "hardware, 1× NVIDIA H100 80GB HBM3, driver 580.159.04, 2026-11-24" /
  // "test-double (imgtool's driver double, not hardware), 2026-11-26: the GPU part never ran on hardware" /
  // "none: the GPU part never ran (no GPU device)"
  // Through strings::printable: device names and sources come from the image and from files.
  std::string summary() const;

 private:
  std::string summary_text() const;
};

// From a run imgtool made (or a pod it checked): bound; the kind from `run`, lowered by the document;
// the verdict recomputed for `variant`.
SmokeEvidence evidence_of_run(const nlohmann::json& probe, const RunFacts& run, const std::string& variant,
                              const std::string& source = "");

// From a run imgtool just made (smoke_runner.h's SmokeResult, typed): as evidence_of_run, with the
// image ID, the docker argv (its --gpus and --shm-size) and `profile`; the verdict lowered to fail
// when the run's was. What the nightly and `imgtool smoke` attest.
struct SmokeResult;
SmokeEvidence evidence_of_result(const SmokeResult& result, const std::string& profile = "");

// From a smoke result's JSON (SmokeResult::to_json: the probe document, the docker argv, the
// run facts, the verdict) -- the form the nightly keeps, so a cached smoke still has its evidence.
// A result without run facts (an older report) gives unbound evidence.
SmokeEvidence evidence_from_result(const nlohmann::json& result, const std::string& profile = "");

// From a bare probe document (probe.py's output, a recorded run): UNBOUND, whatever it says; the
// kind is what the document claims, the verdict recomputed; `source` says where it came from.
SmokeEvidence evidence_from_probe(const nlohmann::json& probe, const std::string& source);

// `e` as it is signed now for the image `image_id`: `image` and `attested` (this clock, UTC) set.
SmokeEvidence stamped(SmokeEvidence e, const std::string& image_id);
// "2026-11-27T09:01:06Z"
std::string utc_text(std::time_t t);

nlohmann::ordered_json to_predicate(const SmokeEvidence& e);
// CheckFailed naming the field for anything that is not such a predicate.
SmokeEvidence from_predicate(const nlohmann::json& predicate);

}  // namespace imgtool::smoke
