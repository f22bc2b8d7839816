// imgtool doctor [--json] [--probe-image IMG] [--no-gpu-run]
// Thin front end: detects this host's facts, judges them, prints the table.
#include <iostream>
#include <memory>

#include "cli/subcommand.h"
#include "host/doctor.h"

namespace imgtool::cli {
namespace {

struct DoctorOptions {
  bool json = false, no_gpu_run = false;
  std::string probe_image = "ubuntu:22.04";
};

int run_doctor(const DoctorOptions& o) {
  host::SystemHost h;
  auto report = host::diagnose(host::detect(h, {o.probe_image, !o.no_gpu_run}), matrix::KnowledgeBase::load_default());
  if (o.json) std::cout << host::to_json(report).dump(2) << "\n";
  else std::cout << host::render_table(report);
  return report.failed() ? 1 : 0;
}

Registration doctor_registration{{"doctor", "Inspect this host: NVIDIA driver, GPUs, Docker engine, NVIDIA container runtime, docker run --gpus",
                  [](CLI::App& sub) -> Action {
                    auto o = std::make_shared<DoctorOptions>();
                    sub.add_flag("--json", o->json, "machine-readable output");
                    sub.add_option("--probe-image", o->probe_image, "image for the `docker run --gpus all … nvidia-smi -L` check (default ubuntu:22.04)");
                    sub.add_flag("--no-gpu-run", o->no_gpu_run, "skip the docker run --gpus all check");
                    return [o] { return run_doctor(*o); };
                  }}};

}  // namespace
}  // namespace imgtool::cli
