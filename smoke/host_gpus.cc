#include "smoke/host_gpus.h"

#include <chrono>

#include "core/process.h"
#include "core/strings.h"

namespace imgtool::smoke {

namespace {

std::vector<std::string> fields(std::string_view line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t comma; (comma = line.find(',', start)) != std::string_view::npos; start = comma + 1)
    out.push_back(strings::trim(std::string(line.substr(start, comma - start))));
  out.push_back(strings::trim(std::string(line.substr(start))));
  return out;
}

}  // namespace

std::optional<std::vector<HostGpu>> parse_host_gpus(std::string_view csv) {
  std::vector<HostGpu> gpus;
  for (const auto& line : strings::split_lines(csv)) {
    if (strings::trim(line).empty()) continue;
    auto f = fields(line);
    if (f.size() != 3 || f[0].rfind("GPU-", 0) != 0 || f[1].empty() || f[2].empty()) return std::nullopt;
    gpus.push_back({f[0], f[1], f[2]});
  }
  return gpus;
}

std::optional<std::vector<HostGpu>> query_host_gpus(const std::string& nvidia_smi) {
  RunOptions o;
  o.timeout = std::chrono::seconds(60);
  o.max_output = 1 << 20;
  try {
    RunResult r = run({nvidia_smi, "--query-gpu=uuid,name,driver_version", "--format=csv,noheader"}, o);
    if (!r.ok()) return std::nullopt;
    return parse_host_gpus(r.out);
  } catch (const std::exception&) {  // not installed: no driver on this host
    return std::nullopt;
  }
}

}  // namespace imgtool::smoke
