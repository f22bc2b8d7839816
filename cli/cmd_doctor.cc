// imgtool doctor [--json] [--probe-image IMG] [--no-gpu-run]
// Thin front end: detects this host's facts, judges them, prints the table. The GPU check's
// container runs a local image by ID inside the engine's fence (host/detect.h).
#include <iostream>
#include <memory>

#include "cli/subcommand.h"
#include "host/doctor.h"
#include "run/image_facts.h"

namespace imgtool::cli {
namespace {

struct DoctorOptions {
  bool json = false, no_gpu_run = false, insecure_http = false;
  std::string probe_image = "ubuntu:22.04";
  std::vector<std::string> images;
};

int run_doctor(const DoctorOptions& o) {
  host::SystemHost h;
  auto kb = matrix::KnowledgeBase::load_default();
  std::vector<runconf::ImageFacts> images;  // read first: a bad reference is refused before any detection runs
  for (const auto& ref : o.images) images.push_back(runconf::read_image_facts(ref, o.insecure_http));
  auto report = host::diagnose(host::detect(h, {.probe_image = o.probe_image, .try_gpu_run = !o.no_gpu_run}), kb);
  for (const auto& i : images)
    for (auto& row :
         host::image_rows(report.facts, {i.ref, i.variant, i.cuda, i.min_driver, i.cuda_archs, i.platform}, kb))
      report.rows.push_back(std::move(row));
  if (o.json)
    std::cout << host::to_json(report).dump(2) << "\n";
  else
    std::cout << host::render_table(report);
  return report.failed() ? 1 : 0;
}

Registration doctor_registration{
    {"doctor", "Inspect this host: NVIDIA driver, GPUs, Docker engine, NVIDIA container runtime, docker run --gpus",
     [](CLI::App& sub) -> Action {
       auto o = std::make_shared<DoctorOptions>();
       sub.add_flag("--json", o->json, "machine-readable output");
       sub.add_option("--probe-image", o->probe_image,
                      "a LOCAL image (name, image ID or repo@sha256 digest) for the `docker run "
                      "--gpus all … nvidia-smi -L` check, run by its ID and never pulled (default ubuntu:22.04)");
       sub.add_flag("--no-gpu-run", o->no_gpu_run, "skip the docker run --gpus all check");
       sub.add_option("--image", o->images,
                      "also judge whether this host can run IMAGE (its GPU code and "
                      "driver floor); a local name, docker-daemon:, docker:// or oci: (repeatable)");
       sub.add_flag("--insecure-http", o->insecure_http, "allow plain http for a non-loopback registry");
       return [o] { return run_doctor(*o); };
     }}};

}  // namespace
}  // namespace imgtool::cli
