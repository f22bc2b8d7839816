// Kubernetes smoke Jobs for the GPU cells (`imgtool plan M --emit k8s --registry R`):
// the GPU smoke runs on a cluster's GPU node while build and publish run in CI.
//
//   DIR/configmap-probe.yaml   ConfigMap imgtool-probe-<10 hex of probe.py> (immutable)
//                              holding smoke/probe/probe.py
//   DIR/job-<name>.yaml        one batch/v1 Job per GPU cell, rendered by run/'s
//                              Kubernetes renderer (run/render.h: nvidia.com/gpu limit,
//                              memory emptyDir at /dev/shm, non-root, GPU feature
//                              discovery nodeSelector nvidia.com/gpu.product for --gpu)
//                              plus nvidia.com/gpu.present=true, the ConfigMap mounted
//                              read-only at /imgtool-probe, restartPolicy Never,
//                              backoffLimit 0, the image BY DIGEST, annotations
//                              io.imgtool.tag / io.imgtool.digest
//   DIR/networkpolicy-smoke.yaml  NetworkPolicy imgtool-smoke-no-network: no ingress, no egress
//                              for every pod labelled app.kubernetes.io/part-of=imgtool-smoke
//                              (the cluster's `--network none`; enforced where its network
//                              plugin enforces NetworkPolicy)
//   DIR/collect.sh             saves each Job's log (the probe's JSON) as results/<tag>.json
//                              for `imgtool nightly collect`
//
// Isolation, as `imgtool smoke` fences a container (engine/engine.h): the Jobs run an image nobody
// has vetted yet, so besides run/'s least privilege (automountServiceAccountToken: false,
// seccompProfile RuntimeDefault, capabilities drop [ALL], allowPrivilegeEscalation false,
// runAsNonRoot with the profile's uid, 1000:1000 when it names none) a smoke pod gets no
// service links, no network (the policy above), and never hostIPC (a profile's ipc: host is
// dropped, as the smoke drops --ipc host). Kubernetes has no per-pod pids limit field: that is
// the node's podPidsLimit.
//
// The probe runs as `imgtool smoke --profile` runs it (--gpus-requested, the profile's expectations,
// --expect-variant gpu, --expect-cuda from the cell), so `nightly collect` judges
// its JSON with the same code. Validated offline with kubernetes-validate for
// runconf::kK8sVersion. Deterministic output.
#pragma once
#include <string>
#include <vector>

#include "matrix/cell.h"
#include "matrix/kb.h"
#include "run/profile.h"

namespace imgtool::emit {

struct CellImage {
  matrix::Cell cell;
  std::string digest;  // "sha256:<64 hex>" the cell's published manifest
};

struct SmokeJobOptions {
  std::string registry;  // HOST[:PORT]/NS (required)
  // The run profile the Jobs run with (run/profile.h; `plan --profile`, default `base`): GPUs
  // (a count; "all" becomes 1), /dev/shm, user, env, limits, and the probe's expectations of them
  // (runconf::probe_expectations). Mounts and the health check are dropped: a smoke needs neither.
  runconf::RunSpec profile;
  std::string gpu_model;        // KB GPU name or nvidia-smi name; "" = the profile's, else any GPU node
  std::string shm_size = "8g";  // when the profile sets no /dev/shm size
  std::string probe_text;       // probe.py
  std::string probe_file = "smoke/probe/probe.py";  // for the header comment
  // This run's nonce (`plan --emit k8s` draws 12 random hex digits when none is given): in every Job's
  // name and its probe's --nonce, so tonight's Jobs never clash with yesterday's (whose pod templates
  // are immutable) and `nightly collect` can tell tonight's document from an older one.
  std::string nonce;
};

struct EmittedFile {
  std::string name;  // relative to the output folder
  std::string text;
  unsigned mode = 0644;
};

// Job name for a tag: DNS-1123, at most 63 characters, unique per tag.
std::string smoke_job_name(const std::string& tag, const std::string& digest, const std::string& nonce);

// 12 random hex digits (OpenSSL's RAND_bytes): a run's nonce.
std::string new_nonce();

// The ConfigMap, one Job per cell and collect.sh. InputError for a cell without
// a digest, a non-gpu cell, or a missing registry.
std::vector<EmittedFile> smoke_jobs(const std::vector<CellImage>& cells, const SmokeJobOptions& o,
                                    const matrix::KnowledgeBase& kb);

}  // namespace imgtool::emit
