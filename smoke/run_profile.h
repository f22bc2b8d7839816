// A run profile (run/profile.h) applied to a smoke run, so what was smoked is what is run. The one
// rule `imgtool smoke --profile`, `verify --profile` and `nightly --profile` all follow:
//
//   GPUs      the user's --gpus wins over the profile; --gpus auto (the default) takes the
//             profile's gpus when it names some (a count, all, devices; 0 = none); when the
//             profile says auto too (base.yaml) or nothing, auto stays, and the runner makes it
//             every GPU for a gpu image and none for a cpu one (resolve_gpus, gpu_host.h).
//   /dev/shm  the user's --shm-size wins; else the profile's shm_size.
//   the rest  the profile's ulimits, IPC, user, env and limits become docker run flags
//             (run_flags), its promises the probe's --expect-memlock/stack/shm/user (probe_args),
//             both appended to what `o` already has.
#pragma once
#include <string>

#include "run/profile.h"
#include "smoke/smoke_runner.h"

namespace imgtool::smoke {

void apply_profile(const runconf::RunSpec& profile, SmokeOptions& o);

// The smoke's run settings in one line — --gpus with the host's note (gpu_host.h), then
// --shm-size, the profile's flags and probe arguments where set — for the nightly's report
// and smoke cache key: a verdict is reused only for the same settings.
std::string settings_key(const SmokeOptions& o);

}  // namespace imgtool::smoke
