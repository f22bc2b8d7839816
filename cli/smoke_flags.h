// The smoke flags `smoke`, `verify` and `nightly` share, registered in one place so the three
// cannot drift: --gpus, --gpu-host/--no-gpu-host, --shm-size, --profile/--set (a run profile,
// applied by smoke::apply_profile, smoke/run_profile.h), --smoke-timeout, --reps, --records,
// --no-record. They fill smoke::SmokeOptions and smoke::RecordOptions; the command adds the rest
// (the image, its own expectations) and makes its one library call.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "smoke/smoke_judge.h"

namespace imgtool::cli {

// How a command words the flags: `smoke` is all smoke ("", and its --timeout stays a name of
// --smoke-timeout); `verify` and `nightly` do more ("smoke: " before each help line; nightly's
// own --timeout is a build's).
struct SmokeFlagStyle {
  const char* help_prefix;
  const char* timeout_names;
};
inline constexpr SmokeFlagStyle kSmokeCommand{"", "--smoke-timeout,--timeout"};
inline constexpr SmokeFlagStyle kSmokePart{"smoke: ", "--smoke-timeout"};

struct SmokeFlags {
  std::string gpus = "auto", gpu_host, shm_size, records;
  bool no_gpu_host = false, no_record = false;
  std::vector<std::string> profiles, sets;  // run profile layers (run-config's), applied to the smoke
  int timeout_s = 900, reps = 0;

  void add(CLI::App& sub, const SmokeFlagStyle& style);
  // After parsing. Sets gpus, the GPU host, /dev/shm, the timeout and --reps on `o`, then the run
  // profile when one is named (--profile, or --set alone on base: loaded here, InputError naming the
  // layer or the --set); `r` gets record and records. Leaves o's image and expectations alone.
  void fill(smoke::SmokeOptions& o, smoke::RecordOptions& r) const;
};

}  // namespace imgtool::cli
