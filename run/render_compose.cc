// Compose file (compose specification, no `version:`): one service with GPU
// device reservations (deploy.resources.reservations.devices), ulimits, shm,
// read-only code mount, limits and json-file log rotation.
#include <yaml-cpp/yaml.h>

#include "run/render.h"
#include "run/yaml_text.h"

namespace imgtool::runconf {

namespace {

YAML::Node ulimit(int64_t v) {
  YAML::Node n;
  n["soft"] = v;
  n["hard"] = v;
  return n;
}

YAML::Node volume(const Mount& m, bool ro) {
  YAML::Node v;
  v["type"] = "bind";
  v["source"] = m.host;
  v["target"] = m.target;
  if (ro) v["read_only"] = true;
  return v;
}

YAML::Node gpu_reservation(const RunSpec& s) {
  YAML::Node d;
  d["driver"] = "nvidia";
  if (!s.gpu_devices.empty())
    for (auto& id : s.gpu_devices) d["device_ids"].push_back(id);
  else if (s.gpus == "all")
    d["count"] = "all";
  else
    d["count"] = std::stoi(s.gpus);
  d["capabilities"].push_back("gpu");
  return d;
}

}  // namespace

std::string render_compose(const RunSpec& s, const std::string& image) {
  require_resolved(s);
  YAML::Node svc;
  svc["image"] = image;
  for (auto& w : s.command) svc["command"].push_back(str_node(w));
  if (!s.user.empty()) svc["user"] = s.user;
  if (!s.workdir.empty()) svc["working_dir"] = s.workdir;
  if (s.shm_bytes) svc["shm_size"] = s.shm_bytes;
  if (!s.ipc.empty()) svc["ipc"] = s.ipc;
  if (s.memlock) svc["ulimits"]["memlock"] = ulimit(s.memlock);
  if (s.stack) svc["ulimits"]["stack"] = ulimit(s.stack);
  if (!s.code.empty()) svc["volumes"].push_back(volume(s.code, true));
  if (!s.data.empty()) svc["volumes"].push_back(volume(s.data, false));
  if (!s.output.empty()) svc["volumes"].push_back(volume(s.output, false));
  for (auto& [k, v] : s.env) svc["environment"][k] = str_node(v);
  if (!s.cpus.empty()) svc["cpus"] = std::stod(s.cpus);
  if (s.memory_bytes) svc["mem_limit"] = s.memory_bytes;
  if (s.log_max_size || s.log_max_file) {
    svc["logging"]["driver"] = "json-file";
    if (s.log_max_size) svc["logging"]["options"]["max-size"] = format_size(s.log_max_size);
    if (s.log_max_file) svc["logging"]["options"]["max-file"] = str_node(std::to_string(s.log_max_file));
  }
  if (!s.health_command.empty()) {
    svc["healthcheck"]["test"].push_back("CMD");
    for (auto& w : s.health_command) svc["healthcheck"]["test"].push_back(str_node(w));
    svc["healthcheck"]["start_period"] = std::to_string(s.health_initial_delay_s) + "s";
    svc["healthcheck"]["interval"] = std::to_string(s.health_period_s) + "s";
  }
  if (s.wants_gpu()) svc["deploy"]["resources"]["reservations"]["devices"].push_back(gpu_reservation(s));
  YAML::Node root;
  root["services"][s.name] = svc;
  return to_yaml(root);
}

}  // namespace imgtool::runconf
