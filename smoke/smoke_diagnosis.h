// Host-side diagnosis of a failed `docker run` of the smoke probe. The
// probe itself diagnoses what it can see inside the container; failures that
// stop the container from starting (no NVIDIA runtime, driver too old for the
// image's NVIDIA_REQUIRE_CUDA, …) only show up in docker's stderr, and are
// turned here into what was expected, what was found and the fix.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace imgtool::smoke {

struct HostDiagnosis {
  std::string code;      // stable key, e.g. "nvidia_runtime_missing"
  std::string summary;   // what was found, one sentence
  std::string fix;       // what to do
  std::string evidence;  // the docker stderr line that matched
  bool retryable = false;
};

// Matches docker's stderr against a table of known failures. nullopt if
// nothing matched (the caller reports the raw stderr).
std::optional<HostDiagnosis> diagnose_docker_failure(std::string_view docker_stderr);

// Diagnosis for a run whose stdout passed the engine's cap (`dropped` bytes past `cap` were
// dropped) with no probe report in what was kept: something in the image floods stdout.
HostDiagnosis output_cut_failure(uint64_t dropped, size_t cap);

// Diagnosis for a run that produced no probe output at all.
HostDiagnosis generic_docker_failure(int exit_code, bool timed_out, std::string_view docker_stderr);

}  // namespace imgtool::smoke
