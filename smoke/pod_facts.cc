#include "smoke/pod_facts.h"

#include "core/error.h"
#include "core/hash.h"
#include "core/json_file.h"
#include "core/strings.h"

namespace imgtool::smoke {

namespace {

using nlohmann::json;

const json& pod_field(const json& j, const char* key) { return json_member(j, key); }

[[noreturn]] void bad_pod(const std::string& where, const std::string& what, const json& found) {
  std::string f = found.is_string() ? "'" + found.get<std::string>() + "'"
                  : found.is_null() ? "none"
                                    : found.type_name();
  throw InputError(strings::printable(where) + ": expected " + what + ", found " + strings::printable(f));
}

const json& single_pod(const json& pods, const std::string& where) {
  if (pod_field(pods, "kind") == "Pod") return pods;
  const json& items = pod_field(pods, "items");
  if (!items.is_array() || items.size() != 1)
    bad_pod(where, "the Job's one pod (kubectl get pods --selector job-name=JOB -o json)",
            items.is_array() ? json(std::to_string(items.size()) + " pods") : items);
  return items[0];
}

std::string pod_text(const json& j, const std::string& where, const std::string& path) {
  if (!j.is_string() || j.get<std::string>().empty()) bad_pod(where, path + " (a string)", j);
  return j.get<std::string>();
}

int granted_gpus(const json& container, const std::string& where) {
  const json& g = pod_field(pod_field(pod_field(container, "resources"), "limits"), "nvidia.com/gpu");
  std::string n = g.is_number_integer() ? std::to_string(g.get<int>()) : g.is_string() ? g.get<std::string>() : "";
  if (n.empty() || n.size() > 3 || n.find_first_not_of("0123456789") != std::string::npos)
    bad_pod(where, "spec.containers[0].resources.limits[\"nvidia.com/gpu\"] (a count)", g);
  return std::stoi(n);
}

// The container's argv is its command followed by its args (the emitted Job puts the whole probe
// line in `command`; a hand-edited one may split it): --nonce's value in either.
std::string nonce_of(const json& container) {
  std::vector<const json*> argv;
  for (const char* key : {"command", "args"})
    if (const json& part = pod_field(container, key); part.is_array())
      for (const json& a : part) argv.push_back(&a);
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (*argv[i] == "--nonce" && argv[i + 1]->is_string()) return argv[i + 1]->get<std::string>();
  return "";
}

}  // namespace

std::string image_id_digest(const std::string& image_id) {
  size_t at = image_id.rfind("@sha256:");
  std::string d = at == std::string::npos ? image_id : image_id.substr(at + 1);
  return is_sha256_digest(d) ? d : "";
}

PodFacts pod_facts(const json& pods, const json& node, const std::string& where) {
  const json& pod = single_pod(pods, where);
  const json& containers = pod_field(pod_field(pod, "spec"), "containers");
  const json& statuses = pod_field(pod_field(pod, "status"), "containerStatuses");
  if (!containers.is_array() || containers.empty()) bad_pod(where, "spec.containers", containers);
  if (!statuses.is_array() || statuses.empty()) bad_pod(where, "status.containerStatuses (a pod that ran)", statuses);
  PodFacts p;
  p.name = pod_text(pod_field(pod_field(pod, "metadata"), "name"), where, "metadata.name");
  p.node = pod_text(pod_field(pod_field(pod, "spec"), "nodeName"), where, "spec.nodeName");
  p.image_id = pod_text(pod_field(statuses[0], "imageID"), where, "status.containerStatuses[0].imageID");
  p.gpus = granted_gpus(containers[0], where);
  p.nonce = nonce_of(containers[0]);
  if (pod_text(pod_field(pod_field(node, "metadata"), "name"), where, "the node's metadata.name") != p.node)
    bad_pod(where, "the node the pod ran on, " + p.node, pod_field(pod_field(node, "metadata"), "name"));
  const json& product = pod_field(pod_field(pod_field(node, "metadata"), "labels"), "nvidia.com/gpu.product");
  p.gpu_product = product.is_string() ? product.get<std::string>() : "";
  return p;
}

}  // namespace imgtool::smoke
