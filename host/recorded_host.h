// A test double of HostSystem: a recorded host as JSON (host/testdata/*.json):
//   {"description": "…",
//    "files":    {"/proc/driver/nvidia/version": "NVRM version: …"},
//    "commands": {"nvidia-smi --query-gpu=…": {"exit": 0, "out": "…", "err": ""}}}
// A command is looked up by its argv joined with spaces; an unrecorded command
// answers like a missing program (exit 127), an unrecorded file is absent.
#pragma once
#include <map>
#include <nlohmann/json.hpp>

#include "host/host_system.h"

namespace imgtool::host {

class RecordedHost : public HostSystem {
 public:
  explicit RecordedHost(const nlohmann::json& recording);
  static RecordedHost load(const std::string& path);
  std::optional<std::string> read_file(const std::string& path) override;
  RunResult run(const std::vector<std::string>& argv, int timeout_s) override;
  const std::vector<std::string>& commands_run() const { return ran_; }

 private:
  nlohmann::json rec_;
  std::vector<std::string> ran_;
};

}  // namespace imgtool::host
