#include "host/detect.h"

#include <unistd.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "core/json_file.h"
#include "core/strings.h"
#include "engine/engine.h"

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
  from = "no /proc/driver/nvidia/version; nvidia-smi: " +
         (r.exit_code == 127 ? std::string("not found") : first_line(r.err + r.out));
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
  nlohmann::json j = r.ok() ? parse_json_or_discarded(r.out) : nlohmann::json();
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

namespace {

// The first "N.N[.N…]" in a line ("NVIDIA Container Toolkit CLI version 1.14.6" -> "1.14.6").
std::string first_version(const std::string& s) {
  auto digit = [&](size_t i) { return i < s.size() && isdigit(static_cast<unsigned char>(s[i])); };
  for (size_t i = 0; i < s.size(); ++i) {
    if (!digit(i) || (i > 0 && (digit(i - 1) || s[i - 1] == '.'))) continue;
    size_t j = i, dots = 0;
    while (digit(j) || (j < s.size() && s[j] == '.' && digit(j + 1))) dots += s[j++] == '.';
    if (dots > 0) return s.substr(i, j - i);
  }
  return "";
}

}  // namespace

std::string toolkit_version(const HostFacts& f) {
  std::string v = first_version(f.ctk_version);
  return v.empty() ? first_version(f.container_cli) : v;
}

std::vector<std::string> gpu_check_argv(const std::string& image_id, const std::string& container_name) {
  // nvidia-smi needs little memory: a fixed limit keeps the argv this host's and every host's alike.
  return engine::run_argv({.image = image_id,
                           .name = container_name,
                           .gpus = "all",
                           .flags = {"--memory", "1g"},
                           .args = {"nvidia-smi", "-L"}});
}

namespace {

constexpr int kGpuCheckTimeoutS = 180;

// The probe image's ID when the engine holds it; "" otherwise (doctor never pulls).
std::string local_image_id(HostSystem& h, const std::string& ref) {
  auto r = h.run({"docker", "image", "inspect", "--format", "{{.Id}}", ref}, 30);
  std::string id = r.ok() ? first_line(r.out) : "";
  return id.rfind("sha256:", 0) == 0 ? id : "";
}

void try_gpu_run(HostSystem& h, const DetectOptions& o, HostFacts& f) {
  f.probe_image_id = local_image_id(h, o.probe_image);
  if (f.probe_image_id.empty()) {
    f.gpu_run_detail = "the probe image " + o.probe_image + " is not present locally (doctor never pulls)";
    return;
  }
  f.gpu_run_tried = true;
  std::string name = o.container_name.empty() ? "imgtool-doctor-" + std::to_string(::getpid()) : o.container_name;
  auto r = h.run(gpu_check_argv(f.probe_image_id, name), kGpuCheckTimeoutS);
  if (r.timed_out) h.run({"docker", "rm", "-f", name}, 60);
  f.gpu_run_ok = r.ok();
  f.gpu_run_detail = r.ok()        ? first_line(r.out)
                     : r.timed_out ? "no answer within " + std::to_string(kGpuCheckTimeoutS) + " s"
                                   : first_line(r.err.empty() ? r.out : r.err);
  f.gpu_run_detail += " (in " + o.probe_image + ", image " + f.probe_image_id.substr(0, 19) + ")";
}

}  // namespace

std::string cpu_arch_of_machine(const std::string& machine) {
  if (machine == "x86_64") return "amd64";
  if (machine == "aarch64" || machine == "arm64") return "arm64";
  return machine;
}

HostFacts detect(HostSystem& h, const DetectOptions& o) {
  HostFacts f;
  if (RunResult m = h.run({"uname", "-m"}, 5); m.ok()) f.cpu_arch = cpu_arch_of_machine(strings::trim(m.out));
  f.driver = detect_driver(h, f.driver_from);
  if (!f.driver.empty()) f.gpus = detect_gpus(h, f.gpus_error);
  f.engine = detect_engine(h);
  f.ctk_version = version_line(h, {"nvidia-ctk", "--version"});
  f.container_cli = version_line(h, {"nvidia-container-cli", "--version"});
  f.runtime_config = h.read_file("/etc/nvidia-container-runtime/config.toml").value_or("");
  if (o.try_gpu_run && !f.driver.empty() && f.engine.reachable) try_gpu_run(h, o, f);
  return f;
}

}  // namespace imgtool::host
