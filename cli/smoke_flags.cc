#include "cli/smoke_flags.h"

#include "run/profile.h"
#include "smoke/run_profile.h"

namespace imgtool::cli {

void SmokeFlags::add(CLI::App& sub, const SmokeFlagStyle& style) {
  std::string p = style.help_prefix;
  sub.add_option(
      "--gpus", gpus,
      p + "docker run --gpus value: auto (default: a --profile's gpus, else all for gpu images, none for cpu), "
          "all, device=0, …; none = no --gpus");
  sub.add_option(
      "--gpu-host", gpu_host,
      p + "what this host offers a gpu image: gpu (default: judged in full), none (judged up to the driver; "
          "the GPU part reported as not run), test-double (the imgtool driver double: cudart, cuBLAS and Paddle "
          "on the GPU reported as not judged)");
  sub.add_flag("--no-gpu-host", no_gpu_host, p + "the same as --gpu-host none");
  sub.add_option("--shm-size", shm_size,
                 p + "docker run --shm-size (e.g. 2g); default a --profile's shm_size, else Docker's 64 MB");
  sub.add_option("--profile", profiles,
                 p + "run profile layer(s) as for run-config: GPUs, shm, ulimits, user, env, limits");
  sub.add_option("--set", sets, p + "run profile key=value, applied last");
  sub.add_option(style.timeout_names, timeout_s, p + "seconds for the probe's docker run (default 900)");
  sub.add_option("--reps", reps, p + "timed repetitions per benchmark (default: the probe's, 20)");
  sub.add_option("--records", records,
                 p + "throughput records SQLite file (default $IMGTOOL_RECORDS or <cache>/records.db)");
  sub.add_flag("--no-record", no_record, p + "do not store or judge throughput");
}

void SmokeFlags::fill(smoke::SmokeOptions& o, smoke::RecordOptions& r) const {
  o.gpus = gpus;
  o.gpu_host = smoke::parse_gpu_host(gpu_host, no_gpu_host);
  o.shm_size = shm_size;
  o.timeout = std::chrono::seconds(timeout_s);
  if (reps > 0) o.probe_args.insert(o.probe_args.end(), {"--reps", std::to_string(reps)});
  if (!profiles.empty() || !sets.empty())
    smoke::apply_profile(
        runconf::load_profile({profiles.empty() ? std::vector<std::string>{"base"} : profiles, sets, {}}), o);
  r.record = !no_record;
  r.records = records;
}

}  // namespace imgtool::cli
