#include "smoke/evidence.h"

#include <cstdio>

#include "core/error.h"

namespace imgtool::smoke {

namespace {

using nlohmann::json;

struct HostName {
  HostKind kind;
  const char* name;
};
constexpr HostName kHostNames[] = {
    {HostKind::hardware, "hardware"}, {HostKind::test_double, "test-double"}, {HostKind::none, "none"}};

std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

std::string cc_text(const json& cc) {
  if (cc.is_array() && cc.size() == 2 && cc[0].is_number_integer() && cc[1].is_number_integer())
    return std::to_string(cc[0].get<int>()) + "." + std::to_string(cc[1].get<int>());
  return cc.is_string() ? cc.get<std::string>() : "";
}

std::vector<EvidenceDevice> devices_of(const json& probe) {
  std::vector<EvidenceDevice> out;
  const json& driver = probe.is_object() && probe.contains("driver") ? probe["driver"] : json();
  if (!driver.is_object() || !driver.contains("devices") || !driver["devices"].is_array()) return out;
  for (const auto& d : driver["devices"])
    out.push_back(
        {str(d, "name"), cc_text(d.value("cc", json())), str(driver, "driver_branch"), str(driver, "driver_cuda")});
  return out;
}

HostKind host_of(const json& probe, const std::vector<EvidenceDevice>& devices) {
  if (devices.empty()) return HostKind::none;
  for (const auto& d : devices)
    if (d.name == kTestDoubleDevice) return HostKind::test_double;
  bool kernels_ran = probe.contains("kernels") && str(probe["kernels"], "status") == "ok";
  return kernels_ran ? HostKind::hardware : HostKind::none;
}

// Every section of the probe's report that has a status, by name.
std::vector<EvidenceSection> sections_of(const json& probe) {
  std::vector<EvidenceSection> out;
  if (!probe.is_object()) return out;
  for (const auto& [name, s] : probe.items())
    if (name != "verdict" && s.is_object() && s.contains("status") && s["status"].is_string())
      out.push_back({name, str(s, "status"), str(s, "reason")});
  return out;
}

std::vector<EvidenceMetric> metrics_of(const json& probe) {
  std::vector<EvidenceMetric> out;
  if (!probe.is_object() || !probe.contains("metrics") || !probe["metrics"].is_array()) return out;
  for (const auto& m : probe["metrics"])
    if (m.is_object() && m.contains("value") && m["value"].is_number())
      out.push_back({str(m, "metric"), str(m, "unit"), str(m, "device"), m["value"].get<double>()});
  return out;
}

// The value after `flag` in argv ("" when absent); "--flag=value" too.
std::string flag_value(const std::vector<std::string>& argv, const std::string& flag) {
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == flag && i + 1 < argv.size()) return argv[i + 1];
    if (argv[i].rfind(flag + "=", 0) == 0) return argv[i].substr(flag.size() + 1);
  }
  return "";
}

const json& need(const json& j, const char* key, json::value_t type, const char* type_name) {
  if (!j.is_object() || !j.contains(key) || j[key].type() != type)
    throw CheckFailed(std::string("smoke attestation: expected field '") + key + "' (" + type_name + "), found " +
                      (j.is_object() && j.contains(key) ? j[key].type_name() : "none"));
  return j[key];
}

}  // namespace

const char* to_string(HostKind k) {
  for (const auto& h : kHostNames)
    if (h.kind == k) return h.name;
  return "none";
}

std::string SmokeEvidence::summary() const {
  std::string day = time.substr(0, 10);
  if (host == HostKind::none)
    return std::string("none: the GPU part never ran (no GPU device)") + (day.empty() ? "" : ", " + day);
  if (host == HostKind::test_double)
    return "test-double (imgtool's driver double, not hardware)" + (day.empty() ? "" : ", " + day) +
           ": the GPU part never ran on hardware";
  std::string s = "hardware, " + std::to_string(devices.size()) + "× " + (devices.empty() ? "" : devices[0].name);
  if (!devices.empty() && !devices[0].driver.empty()) s += ", driver " + devices[0].driver;
  if (!day.empty()) s += ", " + day;
  if (verdict != "pass") s += " (verdict " + verdict + ")";
  if (!source.empty()) s += " [" + source + "]";
  return s;
}

SmokeEvidence evidence_from_probe(const json& probe, const std::string& source) {
  SmokeEvidence e;
  e.devices = devices_of(probe);
  e.host = host_of(probe, e.devices);
  e.sections = sections_of(probe);
  e.metrics = metrics_of(probe);
  e.verdict = probe.is_object() && probe.contains("verdict") ? str(probe["verdict"], "status") : "";
  if (probe.is_object() && probe.contains("probe")) {
    e.probe_version = probe["probe"].contains("version") ? probe["probe"]["version"].dump() : "";
    e.time = str(probe["probe"], "started");
  }
  e.source = source;
  return e;
}

SmokeEvidence evidence_from_result(const json& result, const std::string& profile) {
  SmokeEvidence e = evidence_from_probe(result.value("probe", json()), "");
  if (result.contains("docker") && result["docker"].contains("argv") && result["docker"]["argv"].is_array())
    for (const auto& a : result["docker"]["argv"])
      if (a.is_string()) e.argv.push_back(a.get<std::string>());
  e.gpus = flag_value(e.argv, "--gpus");
  e.shm_size = flag_value(e.argv, "--shm-size");
  e.profile = profile;
  if (result.contains("verdict")) e.verdict = str(result["verdict"], "status");  // imgtool's judgement wins
  return e;
}

nlohmann::ordered_json to_predicate(const SmokeEvidence& e) {
  nlohmann::ordered_json p;
  p["host"] = to_string(e.host);
  p["devices"] = nlohmann::ordered_json::array();
  for (const auto& d : e.devices)
    p["devices"].push_back({{"name", d.name}, {"cc", d.cc}, {"driver", d.driver}, {"cuda_driver", d.cuda_driver}});
  p["argv"] = e.argv;
  p["gpus"] = e.gpus;
  p["shm_size"] = e.shm_size;
  p["profile"] = e.profile;
  p["sections"] = nlohmann::ordered_json::array();
  for (const auto& s : e.sections)
    p["sections"].push_back({{"name", s.name}, {"status", s.status}, {"reason", s.reason}});
  p["metrics"] = nlohmann::ordered_json::array();
  for (const auto& m : e.metrics)
    p["metrics"].push_back({{"metric", m.metric}, {"value", m.value}, {"unit", m.unit}, {"device", m.device}});
  p["verdict"] = e.verdict;
  p["probe_version"] = e.probe_version;
  p["time"] = e.time;
  p["source"] = e.source;
  return p;
}

SmokeEvidence from_predicate(const json& p) {
  using t = json::value_t;
  SmokeEvidence e;
  std::string host = need(p, "host", t::string, "string").get<std::string>();
  bool known = false;
  for (const auto& h : kHostNames)
    if (host == h.name) e.host = h.kind, known = true;
  if (!known) throw CheckFailed("smoke attestation: expected host hardware, test-double or none, found '" + host + "'");
  for (const auto& d : need(p, "devices", t::array, "array"))
    e.devices.push_back({str(d, "name"), str(d, "cc"), str(d, "driver"), str(d, "cuda_driver")});
  for (const auto& a : need(p, "argv", t::array, "array"))
    if (a.is_string()) e.argv.push_back(a.get<std::string>());
  for (const auto& s : need(p, "sections", t::array, "array"))
    e.sections.push_back({str(s, "name"), str(s, "status"), str(s, "reason")});
  for (const auto& m : need(p, "metrics", t::array, "array"))
    e.metrics.push_back({str(m, "metric"), str(m, "unit"), str(m, "device"), m.value("value", 0.0)});
  e.verdict = need(p, "verdict", t::string, "string").get<std::string>();
  e.gpus = str(p, "gpus");
  e.shm_size = str(p, "shm_size");
  e.profile = str(p, "profile");
  e.probe_version = str(p, "probe_version");
  e.time = str(p, "time");
  e.source = str(p, "source");
  return e;
}

}  // namespace imgtool::smoke
