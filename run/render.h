// Renders a RunSpec (profile.h) for one image:
//   docker   one `docker run` command line (shell-quoted)
//   compose  a compose file with one service (passes `docker-compose config`)
//   k8s      a Job (restartPolicy OnFailure + backoffLimit) or a Deployment,
//            validated offline with kubernetes-validate for kK8sVersion
// docker_run_flags() is also what `imgtool smoke/verify --profile` pass to
// docker run, so what was smoked is what is run.
#pragma once
#include <string>
#include <vector>

#include "matrix/kb.h"
#include "run/format.h"
#include "run/image_facts.h"
#include "run/profile.h"

namespace imgtool::runconf {

// The Kubernetes version the k8s output is written for and validated against.
// The oldest Kubernetes release still supported on 2026-11-26 (1.35; 1.36 and 1.37 are the others,
// kubernetes.io/releases; 1.30 ended in 2025): what a manifest here is valid for on every one of them.
// kubernetes-validate 1.37.0 ships schemas v1.25.0 .. v1.37.0.
inline constexpr const char* kK8sVersion = "1.35.0";

struct RenderOptions {
  Format format = Format::kDocker;
  std::string kind = "job";  // k8s: job | deployment
  std::string image;         // the image reference to run (registry/repo:tag)
};

// The docker run flags (without "docker run", image and command):
// runtime_flags() + mounts (host paths made absolute), workdir, log rotation, health check.
std::vector<std::string> docker_run_flags(const RunSpec& s);
// What the container runs WITH — GPUs, /dev/shm, ulimits, IPC, user, environment,
// CPU/memory limits. `imgtool smoke/verify --profile` run the probe with exactly
// these, so what was smoked is what is run.
std::vector<std::string> runtime_flags(const RunSpec& s);
// The probe's expectations for the profile's promises (--expect-memlock/stack/shm/user).
std::vector<std::string> probe_expectations(const RunSpec& s);
// How `imgtool smoke/verify/nightly --profile` run the probe (smoke::apply_profile): the
// profile's GPUs and /dev/shm (the runner's own options), the rest of runtime_flags(), and
// the probe's expectations.
struct SmokeRunSettings {
  std::string gpus;                     // docker run --gpus: "all", "2", "\"device=0,1\"", "none" (gpus: 0);
                                        // "" = the profile leaves it to the image (auto, or not set)
  std::string shm_size;                 // "8g" or ""
  std::vector<std::string> flags;       // runtime_flags() without --gpus/--shm-size
  std::vector<std::string> probe_args;  // probe_expectations()
};
SmokeRunSettings smoke_settings(const RunSpec& s);

// "./data" -> "<cwd>/data" (docker -v and Kubernetes hostPath need absolute paths).
std::string absolute_host_path(const std::string& p);

// gpu_model -> the value GPU feature discovery puts in nvidia.com/gpu.product
// ("NVIDIA A100-SXM4-80GB" -> "NVIDIA-A100-SXM4-80GB"); the KB's name when it knows the model.
std::string gpu_product_label(const std::string& gpu_model, const matrix::KnowledgeBase& kb);

// Error when `s` still says `gpus: auto` (see render() below).
void require_resolved(const RunSpec& s);

std::string render_docker(const RunSpec& s, const std::string& image);
std::string render_compose(const RunSpec& s, const std::string& image);
// Throws InputError for what Kubernetes cannot express (gpus: all).
std::string render_k8s(const RunSpec& s, const std::string& image, const std::string& kind,
                       const matrix::KnowledgeBase& kb);
// The renderers want a spec whose `gpus: auto` is resolved (resolve_gpus); given one that is not,
// they throw Error (a caller's mistake, not the user's).
std::string render(const RunSpec& s, const RenderOptions& o, const matrix::KnowledgeBase& kb);
// run-config's one call: resolves `gpus: auto` for the image and format (resolve_gpus), refuses
// what the image cannot do (check_fits: InputError, exit 2), renders.
std::string render_for_image(RunSpec s, const ImageFacts& img, const RenderOptions& o, const matrix::KnowledgeBase& kb);

// Shell-quotes one word for a POSIX shell ('…' when needed).
std::string shell_quote(const std::string& w);

}  // namespace imgtool::runconf
