#include "run/profile.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <regex>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/paths.h"
#include "matrix/yaml_doc.h"

namespace fs = std::filesystem;

namespace imgtool::runconf {

const std::vector<KeyInfo>& profile_keys() {
  static const std::vector<KeyInfo> keys = {
      {"name", KeyType::kString, "workload name (container, compose service, Kubernetes object)"},
      {"command", KeyType::kList, "the command and its arguments"},
      {"gpus", KeyType::kCount,
       "GPUs: auto (the image's variant: all for gpu, one on Kubernetes, none for cpu), a count >= 0 or 'all'"},
      {"gpu_devices", KeyType::kList, "GPU device indexes or UUIDs (wins over gpus)"},
      {"gpu_model", KeyType::kString, "GPU model the workload needs (KB name or nvidia-smi name); K8s nodeSelector"},
      {"shm_size", KeyType::kSize, "/dev/shm size, e.g. 8g (Paddle's DataLoader workers share tensors there)"},
      {"ipc", KeyType::kIpc, "IPC namespace: private | shareable | host"},
      {"user", KeyType::kUser, "uid:gid to run as (numeric, non-root)"},
      {"ulimit.memlock", KeyType::kUlimit, "RLIMIT_MEMLOCK: 'unlimited' (or -1) or bytes"},
      {"ulimit.stack", KeyType::kUlimit, "RLIMIT_STACK in bytes, e.g. 67108864"},
      {"cpus", KeyType::kCpus, "CPU limit, e.g. 8 or 0.5"},
      {"memory", KeyType::kSize, "memory limit, e.g. 32g"},
      {"mounts.code", KeyType::kMount, "HOST:CONTAINER, mounted read-only"},
      {"mounts.data", KeyType::kMount, "HOST:CONTAINER, writable"},
      {"mounts.output", KeyType::kMount, "HOST:CONTAINER, writable"},
      {"workdir", KeyType::kString, "working directory in the container"},
      {"env.*", KeyType::kString, "environment variable NAME=value"},
      {"log.max_size", KeyType::kSize, "json-file log rotation: size of one file"},
      {"log.max_file", KeyType::kInt, "json-file log rotation: files kept"},
      {"restart.backoff_limit", KeyType::kInt, "Kubernetes Job retries before it fails"},
      {"health.command", KeyType::kList, "liveness/health check command"},
      {"health.initial_delay_s", KeyType::kInt, "seconds before the first check"},
      {"health.period_s", KeyType::kInt, "seconds between checks"},
  };
  return keys;
}

std::string default_profile_dir() { return data_dir() + "/run/profiles"; }

std::optional<uint64_t> parse_size(const std::string& s) {
  static const std::regex re(R"(^([0-9]+(\.[0-9]+)?)([bkmgtBKMGT]|[KMGT]i)?$)");
  std::smatch m;
  if (!std::regex_match(s, m, re)) return std::nullopt;
  static const std::map<std::string, uint64_t> mult = {
      {"", 1},           {"b", 1},           {"k", 1ull << 10},  {"m", 1ull << 20},  {"g", 1ull << 30},
      {"t", 1ull << 40}, {"Ki", 1ull << 10}, {"Mi", 1ull << 20}, {"Gi", 1ull << 30}, {"Ti", 1ull << 40}};
  std::string unit = m[3].str();
  if (unit.size() == 1) unit = std::string(1, char(std::tolower(unit[0])));
  double v = std::stod(m[1].str()) * double(mult.at(unit));
  if (v < 1) return std::nullopt;
  return uint64_t(v);
}

std::optional<int64_t> parse_ulimit(const std::string& s) {
  if (s == "unlimited" || s == "-1") return -1;
  auto v = parse_size(s);
  if (!v) return std::nullopt;
  return int64_t(*v);
}

std::string format_size(uint64_t b) {
  for (auto [unit, m] : std::vector<std::pair<const char*, uint64_t>>{
           {"t", 1ull << 40}, {"g", 1ull << 30}, {"m", 1ull << 20}, {"k", 1ull << 10}})
    if (b % m == 0) return std::to_string(b / m) + unit;
  return std::to_string(b);
}

int RunSpec::gpu_count() const {
  if (!gpu_devices.empty()) return int(gpu_devices.size());
  if (gpus == "all") return -1;
  return gpus.empty() ? 0 : std::stoi(gpus);
}

namespace {

using Settings = std::map<std::string, Setting>;

const KeyInfo* key_info(const std::string& key) {
  for (auto& k : profile_keys())
    if (key == k.key || (std::string(k.key) == "env.*" && key.rfind("env.", 0) == 0 && key.size() > 4)) return &k;
  return nullptr;
}

bool is_uint(const std::string& s) { return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), ::isdigit); }

// What a value of each type must look like; empty when `v` is fine.
std::string type_error(KeyType t, const std::string& v) {
  static const std::regex cpus(R"(^[0-9]+(\.[0-9]+)?$)"), user(R"(^[0-9]+(:[0-9]+)?$)"), mount(R"(^[^:]+:/[^:]*$)");
  switch (t) {
    case KeyType::kString:
    case KeyType::kList:
      return "";
    case KeyType::kCount:
      return v == "auto" || v == "all" || is_uint(v) ? "" : "'auto', 'all' or a GPU count >= 0";
    case KeyType::kSize:
      return parse_size(v) ? "" : "a size > 0 like 8g, 512m, 1Gi or 67108864 (units b k m g t, Ki Mi Gi Ti)";
    case KeyType::kUlimit:
      return parse_ulimit(v) ? "" : "'unlimited', -1, or a size > 0 like 67108864 or 64m";
    case KeyType::kCpus:
      return std::regex_match(v, cpus) && std::stod(v) > 0 ? "" : "a CPU count > 0 like 8 or 0.5";
    case KeyType::kInt:
      return is_uint(v) ? "" : "an integer >= 0";
    case KeyType::kIpc:
      return v == "private" || v == "shareable" || v == "host" ? "" : "private, shareable or host";
    case KeyType::kUser:
      return std::regex_match(v, user) && v.substr(0, v.find(':')) != "0"
                 ? ""
                 : "a numeric non-root uid[:gid] like 1000:1000";
    case KeyType::kMount:
      return std::regex_match(v, mount) ? "" : "HOST:/container/path";
  }
  return "";
}

void set_scalar(Settings& s, const std::string& key, const std::string& value, const std::string& origin) {
  const KeyInfo* k = key_info(key);
  if (!k)
    throw InputError(origin + ": expected a profile key (see `imgtool run-config --keys`), found unknown key '" + key +
                     "'");
  if (k->type == KeyType::kList) {
    s[key] = Setting{"", value.empty() ? std::vector<std::string>{} : std::vector<std::string>{value}, origin};
    return;
  }
  if (auto e = type_error(k->type, value); !e.empty())
    throw InputError(origin + ": " + key + ": expected " + e + ", found '" + value + "'");
  s[key] = Setting{value, {}, origin};
}

struct Loader {
  std::vector<std::string> dirs;
  Settings settings;
  std::vector<std::string> layers;
  std::set<std::string> active;  // files on the current extends chain (cycle check)

  std::string resolve(const std::string& name, const std::string& where) const {
    if (name.find('/') != std::string::npos || name.ends_with(".yaml") || name.ends_with(".yml")) {
      if (fs::is_regular_file(name)) return name;
      throw InputError(where + ": expected an existing profile file, found no file '" + name + "'");
    }
    std::string tried;
    for (auto& d : dirs) {
      fs::path p = fs::path(d) / (name + ".yaml");
      if (fs::is_regular_file(p)) return p.string();
      tried += (tried.empty() ? "" : ", ") + p.string();
    }
    throw InputError(where + ": expected a profile layer named '" + name + "' (" + tried + "), found none");
  }

  void walk(const matrix::YamlDoc& doc, const YAML::Node& n, const std::string& prefix) {
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string key = prefix + it->first.as<std::string>();
      if (key == "extends") continue;  // applied first, by apply()
      YAML::Node v = it->second;       // a handle copy: it->second dies with the iterator proxy
      std::string origin = doc.file() + ":" + std::to_string(it->first.Mark().line + 1);
      const KeyInfo* k = key_info(key);
      if (v.IsMap() && !k) {
        walk(doc, v, key + ".");
        continue;
      }
      if (!k)
        throw InputError(origin + ": expected a profile key (see `imgtool run-config --keys`), found unknown key '" +
                         key + "'");
      if (k->type == KeyType::kList) {
        Setting s{"", {}, origin};
        if (v.IsSequence())
          for (auto e : v) s.list.push_back(e.as<std::string>());
        else if (v.IsScalar())
          s.list.push_back(v.as<std::string>());
        settings[key] = s;
        continue;
      }
      if (!v.IsScalar())
        throw InputError(origin + ": " + key + ": expected a single value, found " + matrix::describe(v));
      set_scalar(settings, key, v.as<std::string>(), origin);
    }
  }

  void apply(const std::string& name, const std::string& where) {
    std::string path = resolve(name, where);
    std::string canon = fs::weakly_canonical(path).string();
    if (active.count(canon))
      throw InputError(where + ": expected profiles to extend without a cycle, found '" + name + "' twice");
    active.insert(canon);
    auto doc = matrix::YamlDoc::load(path);
    const YAML::Node& root = doc.root();
    if (root.IsNull()) {
      layers.push_back(path);
      active.erase(canon);
      return;
    }
    doc.expect_map(root, "a run profile");
    if (root["extends"]) apply(root["extends"].as<std::string>(), doc.where(root["extends"]));
    walk(doc, root, "");
    layers.push_back(path);
    active.erase(canon);
  }
};

std::vector<std::string> get_list(const Settings& s, const std::string& k) {
  return s.count(k) ? s.at(k).list : std::vector<std::string>{};
}
std::string get(const Settings& s, const std::string& k) { return s.count(k) ? s.at(k).value : ""; }

Mount mount_of(const std::string& v) {
  if (v.empty()) return {};
  auto c = v.find(':');
  return {v.substr(0, c), v.substr(c + 1)};
}

RunSpec to_spec(const Settings& s, std::vector<std::string> layers) {
  RunSpec r;
  if (auto n = get(s, "name"); !n.empty()) r.name = n;
  r.command = get_list(s, "command");
  r.gpus = get(s, "gpus");
  r.gpu_devices = get_list(s, "gpu_devices");
  r.gpus_set_at = s.count("gpu_devices") ? s.at("gpu_devices").origin : s.count("gpus") ? s.at("gpus").origin : "";
  r.gpu_model = get(s, "gpu_model");
  if (auto v = get(s, "shm_size"); !v.empty()) r.shm_bytes = *parse_size(v);
  r.ipc = get(s, "ipc");
  r.user = get(s, "user");
  if (auto v = get(s, "ulimit.memlock"); !v.empty()) r.memlock = *parse_ulimit(v);
  if (auto v = get(s, "ulimit.stack"); !v.empty()) r.stack = *parse_ulimit(v);
  r.cpus = get(s, "cpus");
  if (auto v = get(s, "memory"); !v.empty()) r.memory_bytes = *parse_size(v);
  r.code = mount_of(get(s, "mounts.code"));
  r.data = mount_of(get(s, "mounts.data"));
  r.output = mount_of(get(s, "mounts.output"));
  r.workdir = get(s, "workdir");
  for (auto& [k, v] : s)
    if (k.rfind("env.", 0) == 0) r.env[k.substr(4)] = v.value;
  if (auto v = get(s, "log.max_size"); !v.empty()) r.log_max_size = *parse_size(v);
  if (auto v = get(s, "log.max_file"); !v.empty()) r.log_max_file = std::stoi(v);
  if (auto v = get(s, "restart.backoff_limit"); !v.empty()) r.backoff_limit = std::stoi(v);
  r.health_command = get_list(s, "health.command");
  if (auto v = get(s, "health.initial_delay_s"); !v.empty()) r.health_initial_delay_s = std::stoi(v);
  if (auto v = get(s, "health.period_s"); !v.empty()) r.health_period_s = std::stoi(v);
  r.layers = std::move(layers);
  return r;
}

}  // namespace

RunSpec load_profile(const ProfileOptions& o) {
  Loader l;
  l.dirs = o.search_dirs;
  l.dirs.push_back(default_profile_dir());
  for (auto& p : o.profiles) l.apply(p, "--profile " + p);
  for (auto& kv : o.sets) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("--set " + kv + ": expected key=value, found no '='");
    std::string key = kv.substr(0, eq), value = kv.substr(eq + 1), origin = "--set " + kv;
    const KeyInfo* k = key_info(key);
    if (k && k->type == KeyType::kList) {  // --set command="python3 train.py": split on spaces
      Setting s{"", {}, origin};
      std::stringstream ss(value);
      for (std::string w; ss >> w;) s.list.push_back(w);
      l.settings[key] = s;
    } else {
      set_scalar(l.settings, key, value, origin);
    }
  }
  return to_spec(l.settings, l.layers);
}

}  // namespace imgtool::runconf
