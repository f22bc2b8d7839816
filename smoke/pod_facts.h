// Where a Kubernetes smoke Job ran, as the API server says it (never as the pod's log says):
// `kubectl get pods --selector job-name=JOB -o json` (a List with the one pod; backoffLimit 0) and
// `kubectl get node NODE -o json`, saved beside the Job's log by the emitted collect.sh.
//
//   name        the pod's metadata.name
//   node        spec.nodeName
//   image_id    status.containerStatuses[0].imageID ("docker-pullable://…@sha256:…", "…@sha256:…")
//   gpus        spec.containers[0].resources.limits["nvidia.com/gpu"]
//   nonce       the value after --nonce in spec.containers[0].args
//   gpu_product the node's nvidia.com/gpu.product label (GPU feature discovery)
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "smoke/evidence.h"

namespace imgtool::smoke {

// InputError naming `where` and the field for a document that is not a pod (list) or node.
PodFacts pod_facts(const nlohmann::json& pods, const nlohmann::json& node, const std::string& where);

// The "sha256:<hex>" an imageID names ("" when none).
std::string image_id_digest(const std::string& image_id);

}  // namespace imgtool::smoke
