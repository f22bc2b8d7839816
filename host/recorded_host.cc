#include "host/recorded_host.h"

#include "core/fs.h"
#include "core/json_file.h"

namespace imgtool::host {

RecordedHost::RecordedHost(const nlohmann::json& r) : rec_(r) {}

RecordedHost RecordedHost::load(const std::string& path) {
  return RecordedHost(read_json_file(path, "a recorded host"));
}

std::optional<std::string> RecordedHost::read_file(const std::string& path) {
  if (rec_.contains("files") && rec_["files"].contains(path)) return rec_["files"][path].get<std::string>();
  return std::nullopt;
}

RunResult RecordedHost::run(const std::vector<std::string>& argv, int) {
  std::string key;
  for (auto& a : argv) key += (key.empty() ? "" : " ") + a;
  ran_.push_back(key);
  if (!rec_.contains("commands") || !rec_["commands"].contains(key))
    return RunResult{127, false, "", argv[0] + ": command not found"};
  auto& c = rec_["commands"][key];
  return RunResult{c.value("exit", 0), false, c.value("out", ""), c.value("err", "")};
}

}  // namespace imgtool::host
