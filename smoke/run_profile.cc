#include "smoke/run_profile.h"

#include "run/render.h"

namespace imgtool::smoke {

void apply_profile(const runconf::RunSpec& profile, SmokeOptions& o) {
  runconf::SmokeRunSettings s = runconf::smoke_settings(profile);
  if ((o.gpus.empty() || o.gpus == "auto") && !s.gpus.empty()) o.gpus = s.gpus;
  if (o.shm_size.empty()) o.shm_size = s.shm_size;
  o.run_flags.insert(o.run_flags.end(), s.flags.begin(), s.flags.end());
  o.probe_args.insert(o.probe_args.end(), s.probe_args.begin(), s.probe_args.end());
}

std::string settings_key(const SmokeOptions& o) {
  std::string key = o.gpus + gpu_host_mode(o.gpu_host).note;
  if (!o.shm_size.empty()) key += " --shm-size " + o.shm_size;
  for (const auto& w : o.run_flags) key += " " + w;
  for (const auto& w : o.probe_args) key += " " + w;
  return key;
}

}  // namespace imgtool::smoke
