// Run profiles: how to run an image, as layered data files (run/profiles/*.yaml).
// A profile names the settings Paddle needs to stay alive (GPUs, /dev/shm,
// memlock/stack ulimits, a non-root user, mounts, limits, logs, a health
// check). Layers apply in order — base (generic resources) -> domain (ocr,
// detection) -> project — each file may name its parent with `extends:`; a
// later layer overrides an earlier one key by key, and `--set key=value` wins
// last. Every key is declared once in a table (profile_keys()) with its type,
// so an unknown key or an unparsable value is one line naming file:line (or
// the --set) and the key. The merged result is a typed RunSpec that the
// renderers (render.h), smoke and verify all read, so what was smoked is what
// is run.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace imgtool::runconf {

// One merged setting: its value (lists for list keys) and where it was set.
struct Setting {
  std::string value;              // scalar keys
  std::vector<std::string> list;  // list keys (command, gpu_devices, health.command)
  std::string origin;             // "run/profiles/ocr.yaml:4" or "--set shm_size=8g"
};

enum class KeyType { kString, kCount, kSize, kUlimit, kCpus, kInt, kList, kIpc, kUser, kMount };

struct KeyInfo {
  const char* key;  // "shm_size"; "env.*" stands for every env.NAME
  KeyType type;
  const char* help;  // one line (README, --help)
};
// The table of every profile key.
const std::vector<KeyInfo>& profile_keys();

// A mount: host path -> container path.
struct Mount {
  std::string host, target;
  bool empty() const { return host.empty(); }
};

// The typed result. Sizes are bytes; 0 = not set. Ulimits: -1 = unlimited, 0 = not set.
struct RunSpec {
  std::string name = "paddle";
  std::vector<std::string> command;
  std::string gpus;  // "" (not set), "auto" (the image decides: resolve_gpus), "all", or a count "2"
  std::vector<std::string> gpu_devices;  // device ids/UUIDs; wins over gpus when set
  std::string gpu_model;                 // "A100", or an nvidia-smi device name; "" = any
  uint64_t shm_bytes = 0;
  std::string ipc;                 // "" | private | shareable | host
  std::string user;                // "1000:1000"
  int64_t memlock = 0, stack = 0;  // ulimits
  std::string cpus;                // "8" / "0.5"
  uint64_t memory_bytes = 0;
  Mount code, data, output;  // code is mounted read-only
  std::string workdir;
  std::map<std::string, std::string> env;
  uint64_t log_max_size = 0;
  int log_max_file = 0;
  int backoff_limit = 4;
  std::vector<std::string> health_command;
  int health_initial_delay_s = 30, health_period_s = 30;
  std::vector<std::string> layers;  // files applied, in order

  // `gpus: auto` not yet resolved against an image (image_facts.h: resolve_gpus).
  bool gpus_auto() const { return gpu_devices.empty() && gpus == "auto"; }
  // GPUs asked for by devices, a count > 0 or "all" ("auto" asks for nothing until resolved).
  bool wants_gpu() const { return !gpu_devices.empty() || (!gpus.empty() && gpus != "0" && gpus != "auto"); }
  int gpu_count() const;    // devices' count, the count, or -1 for "all" (not for "auto")
  std::string gpus_set_at;  // origin of gpus/gpu_devices (for messages)
};

struct ProfileOptions {
  std::vector<std::string> profiles;     // names (run/profiles/<name>.yaml) or paths, applied in order
  std::vector<std::string> sets;         // "key=value", applied last
  std::vector<std::string> search_dirs;  // extra folders searched for names before the default
};

// Loads and merges the layers. Throws InputError (exit 2) with one line:
// unknown key, missing layer, a cycle in `extends`, unparsable size ("8gb"),
// negative numbers ("-1").
RunSpec load_profile(const ProfileOptions& o);

// Parsers (exposed for tests and for the smoke probe's expectations).
std::optional<uint64_t> parse_size(const std::string& s);   // "8g", "512m", "1Gi", "67108864"
std::optional<int64_t> parse_ulimit(const std::string& s);  // "unlimited"/"-1" -> -1, else a size > 0
std::string format_size(uint64_t bytes);                    // 8589934592 -> "8g"

// <data dir>/run/profiles
std::string default_profile_dir();

}  // namespace imgtool::runconf
