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
// The host kind is read off the probe's own report, never from a flag or a label:
//   hardware     the driver section found devices, none of them imgtool's driver double, and the
//                kernels section ran on them;
//   test-double  a device is imgtool's driver double (tests/gpu_engine, probe's TEST_DOUBLE_NAME);
//   none         no device: no --gpus, no driver, or no probe report at all.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace imgtool::smoke {

inline constexpr const char* kSmokePredicateType = "https://imgtool.dev/attestations/gpu-smoke/v1";
inline constexpr const char* kTestDoubleDevice = "imgtool fake GPU (test double, not hardware)";

enum class HostKind { hardware, test_double, none };
const char* to_string(HostKind k);

struct EvidenceDevice {
  std::string name, cc, driver, cuda_driver;
};
struct EvidenceSection {
  std::string name, status, reason;
};
struct EvidenceMetric {
  std::string metric, unit, device;
  double value = 0;
};

struct SmokeEvidence {
  HostKind host = HostKind::none;
  std::vector<EvidenceDevice> devices;
  std::vector<std::string> argv;
  std::string gpus, shm_size, profile;
  std::vector<EvidenceSection> sections;
  std::vector<EvidenceMetric> metrics;
  std::string verdict, probe_version, time;
  std::string source;  // "" = smoked by this run; "replayed: FILE", "collected: FILE"
  bool hardware_pass() const { return host == HostKind::hardware && verdict == "pass"; }
  // "hardware, 1× NVIDIA H100 80GB HBM3, driver 580.159.04, 2026-11-24" /
  // "test-double (imgtool's driver double, not hardware), 2026-11-26: the GPU part never ran on hardware" /
  // "none: the GPU part never ran (no GPU device)"
  std::string summary() const;
};

// From a smoke result's JSON (SmokeResult::to_json: the probe document, the docker argv, the
// verdict) -- the form the nightly keeps, so a cached smoke still has its evidence.
SmokeEvidence evidence_from_result(const nlohmann::json& result, const std::string& profile = "");

// From a bare probe document (probe.py's output: a Kubernetes Job's log, a recorded run); `source`
// says where it came from ("collected: FILE", "replayed: FILE").
SmokeEvidence evidence_from_probe(const nlohmann::json& probe, const std::string& source);

nlohmann::ordered_json to_predicate(const SmokeEvidence& e);
// CheckFailed naming the field for anything that is not such a predicate.
SmokeEvidence from_predicate(const nlohmann::json& predicate);

}  // namespace imgtool::smoke
