// The seam between host detection and the machine: reading a file and running
// a command. SystemHost is the real machine; RecordedHost (recorded_host.h)
// replays what a machine answered (tests feed recorded hosts: a V100 with
// 470.82.01, an H100 with 550, no GPU, no runtime, an old engine). SystemHost keeps at most
// engine::kMaxRunOutput bytes of each output stream of a command (core/process.h: max_output).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/process.h"

namespace imgtool::host {

class HostSystem {
 public:
  virtual ~HostSystem() = default;
  // The file's bytes, or nullopt when it does not exist / cannot be read.
  virtual std::optional<std::string> read_file(const std::string& path) = 0;
  // Runs argv; a missing program is exit_code 127 with "not found" in err (never throws).
  virtual RunResult run(const std::vector<std::string>& argv, int timeout_s) = 0;
};

class SystemHost : public HostSystem {
 public:
  std::optional<std::string> read_file(const std::string& path) override;
  RunResult run(const std::vector<std::string>& argv, int timeout_s) override;
};

}  // namespace imgtool::host
