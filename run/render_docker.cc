#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "run/render.h"

namespace imgtool::runconf {

std::string shell_quote(const std::string& w) {
  bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return isalnum((unsigned char)c) || std::string("-_./:=,@%+").find(c) != std::string::npos;
  });
  if (plain) return w;
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

Format parse_format(const std::string& s) {
  if (s == "docker") return Format::kDocker;
  if (s == "compose") return Format::kCompose;
  if (s == "k8s") return Format::kK8s;
  throw InputError("--format: expected docker, compose or k8s, found '" + s + "'");
}

namespace {
std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (auto& x : v) out += (out.empty() ? "" : sep) + x;
  return out;
}
std::string ulimit_value(int64_t v) { return v < 0 ? "-1" : std::to_string(v); }
}  // namespace

std::string absolute_host_path(const std::string& p) {
  return p.empty() || p[0] == '/' ? p : std::filesystem::absolute(p).lexically_normal().string();
}

std::vector<std::string> probe_expectations(const RunSpec& s) {
  std::vector<std::string> a;
  if (s.memlock) a.insert(a.end(), {"--expect-memlock", std::to_string(s.memlock)});
  if (s.stack) a.insert(a.end(), {"--expect-stack", std::to_string(s.stack)});
  if (s.shm_bytes) a.insert(a.end(), {"--expect-shm", std::to_string(s.shm_bytes)});
  if (!s.user.empty()) a.insert(a.end(), {"--expect-user", s.user});
  return a;
}

std::vector<std::string> runtime_flags(const RunSpec& s) {
  std::vector<std::string> f;
  auto add = [&](const std::string& flag, const std::string& v) {
    if (!v.empty()) {
      f.push_back(flag);
      f.push_back(v);
    }
  };
  if (!s.gpu_devices.empty())
    add("--gpus", "\"device=" + join(s.gpu_devices, ",") + "\"");
  else if (s.wants_gpu())
    add("--gpus", s.gpus);
  if (s.shm_bytes) add("--shm-size", format_size(s.shm_bytes));
  if (s.memlock) add("--ulimit", "memlock=" + ulimit_value(s.memlock));
  if (s.stack) add("--ulimit", "stack=" + ulimit_value(s.stack));
  add("--ipc", s.ipc);
  add("--user", s.user);
  for (auto& [k, v] : s.env) add("-e", k + "=" + v);
  add("--cpus", s.cpus);
  if (s.memory_bytes) add("--memory", format_size(s.memory_bytes));
  return f;
}

SmokeRunSettings smoke_settings(const RunSpec& s) {
  SmokeRunSettings r;
  auto f = runtime_flags(s);
  for (size_t i = 0; i + 1 < f.size(); i += 2) {
    if (f[i] == "--gpus")
      r.gpus = f[i + 1];
    else if (f[i] == "--shm-size")
      r.shm_size = f[i + 1];
    else
      r.flags.insert(r.flags.end(), {f[i], f[i + 1]});
  }
  if (s.gpu_devices.empty() && s.gpus == "0") r.gpus = "none";  // the profile says no GPU
  r.probe_args = probe_expectations(s);
  return r;
}

std::vector<std::string> docker_run_flags(const RunSpec& s) {
  std::vector<std::string> f = runtime_flags(s);
  auto add = [&](const std::string& flag, const std::string& v) {
    if (!v.empty()) {
      f.push_back(flag);
      f.push_back(v);
    }
  };
  if (!s.code.empty()) add("-v", absolute_host_path(s.code.host) + ":" + s.code.target + ":ro");
  if (!s.data.empty()) add("-v", absolute_host_path(s.data.host) + ":" + s.data.target);
  if (!s.output.empty()) add("-v", absolute_host_path(s.output.host) + ":" + s.output.target);
  add("--workdir", s.workdir);
  if (s.log_max_size || s.log_max_file) add("--log-driver", "json-file");
  if (s.log_max_size) add("--log-opt", "max-size=" + format_size(s.log_max_size));
  if (s.log_max_file) add("--log-opt", "max-file=" + std::to_string(s.log_max_file));
  if (!s.health_command.empty()) {
    add("--health-cmd", join(s.health_command, " "));
    add("--health-start-period", std::to_string(s.health_initial_delay_s) + "s");
    add("--health-interval", std::to_string(s.health_period_s) + "s");
  }
  return f;
}

std::string render_docker(const RunSpec& s, const std::string& image) {
  require_resolved(s);
  std::vector<std::string> words = {"docker", "run", "--rm", "--name", s.name};
  for (auto& w : docker_run_flags(s)) words.push_back(w);
  words.push_back(image);
  for (auto& w : s.command) words.push_back(w);
  std::string out;
  for (auto& w : words) out += (out.empty() ? "" : " ") + shell_quote(w);
  return out + "\n";
}

void require_resolved(const RunSpec& s) {
  if (s.gpus_auto())
    throw Error("gpus: auto reached a renderer unresolved; resolve it against the image first (runconf::resolve_gpus)");
}

std::string render(const RunSpec& s, const RenderOptions& o, const matrix::KnowledgeBase& kb) {
  switch (o.format) {
    case Format::kDocker:
      return render_docker(s, o.image);
    case Format::kCompose:
      return render_compose(s, o.image);
    case Format::kK8s:
      return render_k8s(s, o.image, o.kind, kb);
  }
  return "";
}

std::string render_for_image(RunSpec s, const ImageFacts& img, const RenderOptions& o,
                             const matrix::KnowledgeBase& kb) {
  resolve_gpus(s, img, o.format);
  check_fits(s, img, kb);
  return render(s, o, kb);
}

}  // namespace imgtool::runconf
