// Kubernetes Job (batch/v1; restartPolicy OnFailure, backoffLimit) or
// Deployment (apps/v1; restartPolicy Always, as Deployments require):
// limits/requests incl. nvidia.com/gpu, a memory-backed emptyDir at /dev/shm,
// a non-root securityContext, a liveness probe, and a nodeSelector on GPU
// feature discovery's nvidia.com/gpu.product when a GPU model is named.
// Least privilege (Pod Security Standards "restricted"): the pod mounts no service-account token
// (automountServiceAccountToken: false: Paddle never talks to the API server), runs under the
// runtime's default seccomp profile, and its container drops every capability and may not gain
// privileges. runAsNonRoot is always set: the profile's user is a numeric non-root uid (profile.h);
// without one the kubelet starts the container only when the image's own USER is numeric and
// non-root, and otherwise refuses it ("image will run as root"): set `user` for such an image.
// Kubernetes has no per-pod ulimit: the profile's memlock/stack are recorded
// in an annotation (they come from the node's container runtime).
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "run/render.h"
#include "run/yaml_text.h"

namespace imgtool::runconf {

namespace {

// Kubernetes quantities: 8589934592 -> "8Gi".
std::string quantity(uint64_t b) {
  for (auto [unit, m] : std::vector<std::pair<const char*, uint64_t>>{
           {"Ti", 1ull << 40}, {"Gi", 1ull << 30}, {"Mi", 1ull << 20}, {"Ki", 1ull << 10}})
    if (b % m == 0) return std::to_string(b / m) + unit;
  return std::to_string(b);
}

std::string label_safe(std::string v) {
  for (char& c : v)
    if (!isalnum((unsigned char)c) && c != '-' && c != '_' && c != '.') c = '-';
  return v.substr(0, 63);
}

YAML::Node resources(const RunSpec& s) {
  YAML::Node r;
  if (!s.cpus.empty()) r["limits"]["cpu"] = str_node(s.cpus), r["requests"]["cpu"] = str_node(s.cpus);
  if (s.memory_bytes)
    r["limits"]["memory"] = quantity(s.memory_bytes), r["requests"]["memory"] = quantity(s.memory_bytes);
  if (s.wants_gpu()) {
    if (s.gpu_devices.empty() && s.gpus == "all")
      throw InputError(
          (s.gpus_set_at.empty() ? "" : s.gpus_set_at + ": ") +
          "gpus: expected a GPU count for --format k8s (Kubernetes schedules nvidia.com/gpu by count), found 'all'");
    std::string n = std::to_string(s.gpu_count());
    r["limits"]["nvidia.com/gpu"] = str_node(n);
    r["requests"]["nvidia.com/gpu"] = str_node(n);
  }
  return r;
}

void add_mount(YAML::Node& c, YAML::Node& vols, const std::string& name, const Mount& m, bool ro) {
  if (m.empty()) return;
  YAML::Node vm;
  vm["name"] = name;
  vm["mountPath"] = m.target;
  if (ro) vm["readOnly"] = true;
  c["volumeMounts"].push_back(vm);
  YAML::Node v;
  v["name"] = name;
  v["hostPath"]["path"] = absolute_host_path(m.host);
  v["hostPath"]["type"] = ro ? "Directory" : "DirectoryOrCreate";
  vols.push_back(v);
}

YAML::Node security(const RunSpec& s) {
  YAML::Node sc;
  sc["runAsNonRoot"] = true;
  if (!s.user.empty()) {
    auto colon = s.user.find(':');
    sc["runAsUser"] = std::stoll(s.user.substr(0, colon));
    if (colon != std::string::npos) sc["runAsGroup"] = std::stoll(s.user.substr(colon + 1));
  }
  return sc;
}

YAML::Node container(const RunSpec& s, const std::string& image, YAML::Node& vols) {
  YAML::Node c;
  c["name"] = s.name;
  c["image"] = image;
  for (auto& w : s.command) c["command"].push_back(str_node(w));
  if (!s.workdir.empty()) c["workingDir"] = s.workdir;
  for (auto& [k, v] : s.env) {
    YAML::Node e;
    e["name"] = k;
    e["value"] = str_node(v);
    c["env"].push_back(e);
  }
  // No limits (a cpu image with no cpus/memory set): no `resources` at all; an empty node
  // would be written as `resources: ""`, which Kubernetes refuses ("'' is not of type 'object'").
  if (YAML::Node r = resources(s); r.size()) c["resources"] = r;
  c["securityContext"] = security(s);
  c["securityContext"]["allowPrivilegeEscalation"] = false;
  c["securityContext"]["capabilities"]["drop"].push_back("ALL");
  if (s.shm_bytes) {
    YAML::Node vm, v;
    vm["name"] = "dshm";
    vm["mountPath"] = "/dev/shm";
    c["volumeMounts"].push_back(vm);
    v["name"] = "dshm";
    v["emptyDir"]["medium"] = "Memory";
    v["emptyDir"]["sizeLimit"] = quantity(s.shm_bytes);
    vols.push_back(v);
  }
  add_mount(c, vols, "code", s.code, true);
  add_mount(c, vols, "data", s.data, false);
  add_mount(c, vols, "output", s.output, false);
  if (!s.health_command.empty()) {
    for (auto& w : s.health_command) c["livenessProbe"]["exec"]["command"].push_back(str_node(w));
    c["livenessProbe"]["initialDelaySeconds"] = s.health_initial_delay_s;
    c["livenessProbe"]["periodSeconds"] = s.health_period_s;
  }
  return c;
}

YAML::Node pod_template(const RunSpec& s, const std::string& image, const std::string& restart,
                        const matrix::KnowledgeBase& kb) {
  YAML::Node t, vols;
  t["metadata"]["labels"]["app.kubernetes.io/name"] = label_safe(s.name);
  if (s.memlock || s.stack)
    t["metadata"]["annotations"]["imgtool.io/ulimits"] =
        "memlock=" + std::string(s.memlock < 0 ? "unlimited" : std::to_string(s.memlock)) +
        " stack=" + std::to_string(s.stack) +
        " (Kubernetes has no per-pod ulimit: set by the node's container runtime)";
  YAML::Node spec;
  spec["restartPolicy"] = restart;
  if (!s.gpu_model.empty())
    spec["nodeSelector"]["nvidia.com/gpu.product"] = label_safe(gpu_product_label(s.gpu_model, kb));
  if (s.ipc == "host") spec["hostIPC"] = true;
  spec["automountServiceAccountToken"] = false;
  spec["securityContext"] = security(s);
  spec["securityContext"]["seccompProfile"]["type"] = "RuntimeDefault";
  spec["containers"].push_back(container(s, image, vols));
  if (vols.size()) spec["volumes"] = vols;
  t["spec"] = spec;
  return t;
}

}  // namespace

std::string gpu_product_label(const std::string& gpu_model, const matrix::KnowledgeBase& kb) {
  const matrix::GpuSpec* g = kb.find_gpu(gpu_model);
  std::string name = g ? g->name : gpu_model;
  for (char& c : name)
    if (c == ' ') c = '-';
  return name;
}

std::string render_k8s(const RunSpec& s, const std::string& image, const std::string& kind,
                       const matrix::KnowledgeBase& kb) {
  require_resolved(s);
  if (kind != "job" && kind != "deployment")
    throw InputError("--kind: expected job or deployment, found '" + kind + "'");
  YAML::Node root;
  bool job = kind == "job";
  root["apiVersion"] = job ? "batch/v1" : "apps/v1";
  root["kind"] = job ? "Job" : "Deployment";
  root["metadata"]["name"] = label_safe(s.name);
  root["metadata"]["labels"]["app.kubernetes.io/name"] = label_safe(s.name);
  if (job) {
    root["spec"]["backoffLimit"] = s.backoff_limit;
  } else {
    root["spec"]["replicas"] = 1;
    root["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"] = label_safe(s.name);
  }
  root["spec"]["template"] = pod_template(s, image, job ? "OnFailure" : "Always", kb);
  return to_yaml(root);
}

}  // namespace imgtool::runconf
