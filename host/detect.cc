#include "host/detect.h"

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

namespace imgtool::host {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && isspace((unsigned char)s.back())) s.pop_back();
  size_t i = 0;
  while (i < s.size() && isspace((unsigned char)s[i])) ++i;
  return s.substr(i);
}
std::string first_line(const std::string& s) { return trim(s.substr(0, s.find('\n'))); }

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string f; std::getline(ss, f, ',');) out.push_back(trim(f));
  return out;
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);)
    if (!trim(l).empty()) out.push_back(trim(l));
  return out;
}

std::string version_line(HostSystem& h, const std::vector<std::string>& argv) {
  auto r = h.run(argv, 20);
  return r.ok() ? first_line(r.out) : "";
}

}  // namespace

std::string detect_driver(HostSystem& h, std::string& from) {
  static const std::regex re(R"(Kernel Module\s+([0-9]+(\.[0-9]+)+))");
  std::smatch m;
  if (auto v = h.read_file("/proc/driver/nvidia/version"); v && std::regex_search(*v, m, re)) {
    from = "/proc/driver/nvidia/version";
    return m[1].str();
  }
  auto r = h.run({"nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"}, 30);
  if (r.ok() && !lines(r.out).empty()) {
    from = "nvidia-smi";
    return lines(r.out).front();
  }
  from = "no /proc/driver/nvidia/version; nvidia-smi: " + (r.exit_code == 127 ? std::string("not found") : first_line(r.err + r.out));
  return "";
}

std::vector<GpuInfo> detect_gpus(HostSystem& h, std::string& error) {
  std::vector<GpuInfo> out;
  auto r = h.run({"nvidia-smi", "--query-gpu=name,compute_cap,memory.total", "--format=csv,noheader"}, 30);
  bool with_cc = r.ok();
  if (!with_cc) r = h.run({"nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"}, 30);
  if (!r.ok()) {
    error = r.exit_code == 127 ? "nvidia-smi not found" : first_line(r.err + r.out);
    return out;
  }
  for (auto& l : lines(r.out)) {
    auto f = split_csv(l);
    if (f.empty()) continue;
    out.push_back(with_cc && f.size() >= 3 ? GpuInfo{f[0], f[1], f[2]} : GpuInfo{f[0], "", f.size() >= 2 ? f[1] : ""});
  }
  return out;
}

EngineInfo detect_engine(HostSystem& h) {
  EngineInfo e;
  auto r = h.run({"docker", "info", "--format", "{{json .}}"}, 30);
  nlohmann::json j = r.ok() ? nlohmann::json::parse(r.out, nullptr, false) : nlohmann::json();
  if (!r.ok() || !j.is_object() || !j.contains("ServerVersion")) {
    e.error = r.exit_code == 127 ? "docker: command not found" : first_line(r.err.empty() ? r.out : r.err);
    return e;
  }
  e.reachable = true;
  e.version = j.value("ServerVersion", "");
  e.storage_driver = j.value("Driver", "");
  e.cgroup_version = j.value("CgroupVersion", "");
  e.default_runtime = j.value("DefaultRuntime", "");
  if (j.contains("Runtimes") && j["Runtimes"].is_object())
    for (auto& [k, v] : j["Runtimes"].items()) e.runtimes.push_back(k);
  return e;
}

HostFacts detect(HostSystem& h, const DetectOptions& o) {
  HostFacts f;
  f.driver = detect_driver(h, f.driver_from);
  if (!f.driver.empty()) f.gpus = detect_gpus(h, f.gpus_error);
  f.engine = detect_engine(h);
  f.ctk_version = version_line(h, {"nvidia-ctk", "--version"});
  f.container_cli = version_line(h, {"nvidia-container-cli", "--version"});
  if (!o.try_gpu_run || f.driver.empty() || !f.engine.reachable) return f;
  f.gpu_run_tried = true;
  auto r = h.run({"docker", "run", "--rm", "--gpus", "all", o.probe_image, "nvidia-smi", "-L"}, 180);
  f.gpu_run_ok = r.ok();
  f.gpu_run_detail = r.ok() ? first_line(r.out) : first_line(r.err.empty() ? r.out : r.err);
  return f;
}

}  // namespace imgtool::host
