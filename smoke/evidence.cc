#include "smoke/evidence.h"

#include <cstdio>

#include "core/error.h"
#include "core/json_file.h"
#include "core/strings.h"
#include "smoke/smoke_runner.h"

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

// A section of the probe's document; null when absent or not an object.
const json& section(const json& probe, const char* name) {
  const json& s = json_member(probe, name);
  return s.is_object() ? s : json_member(s, "");  // s is no object: the null value
}

const json& member(const json& j, const char* key) { return json_member(j, key); }

std::vector<EvidenceDevice> devices_of(const json& probe) {
  std::vector<EvidenceDevice> out;
  const json& driver = section(probe, "driver");
  if (!driver.contains("devices") || !driver["devices"].is_array()) return out;
  for (const auto& d : driver["devices"])
    out.push_back({str(d, "name"), cc_text(member(d, "cc")), str(driver, "driver_branch"), str(driver, "driver_cuda"),
                   str(d, "uuid")});
  return out;
}

bool kernels_ran(const json& probe) { return str(section(probe, "kernels"), "status") == "ok"; }

// What the document itself claims (a bare document's kind; a bound run's kind never exceeds it).
HostKind claimed_host(const json& probe, const std::vector<EvidenceDevice>& devices) {
  if (devices.empty()) return HostKind::none;
  for (const auto& d : devices)
    if (d.name == kTestDoubleDevice) return HostKind::test_double;
  return kernels_ran(probe) ? HostKind::hardware : HostKind::none;
}

int rank(HostKind k) { return k == HostKind::hardware ? 2 : k == HostKind::test_double ? 1 : 0; }

HostKind lower(HostKind a, HostKind b) { return rank(a) <= rank(b) ? a : b; }

// "NVIDIA H100 80GB HBM3" and the GPU feature discovery label "NVIDIA-H100-80GB-HBM3" name one product.
std::string product_key(std::string s) {
  for (char& c : s) c = c == ' ' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

HostKind pod_kind(const PodFacts& pod, const std::vector<EvidenceDevice>& devices, std::string& why) {
  if (pod.gpus < static_cast<int>(devices.size()))
    return why = "the pod was granted " + std::to_string(pod.gpus) + " nvidia.com/gpu but the probe saw " +
                 std::to_string(devices.size()) + " device(s)",
           HostKind::none;
  if (pod.gpu_product.empty())
    return why = "node " + pod.node + " carries no nvidia.com/gpu.product label: nothing outside the pod names its GPU",
           HostKind::none;
  for (const auto& d : devices)
    if (product_key(d.name) != product_key(pod.gpu_product))
      return why = "the probe saw '" + d.name + "' but node " + pod.node + " is labelled '" + pod.gpu_product + "'",
             HostKind::none;
  return HostKind::hardware;
}

HostKind local_kind(const std::vector<HostGpu>& host, const std::vector<EvidenceDevice>& devices, std::string& why) {
  for (const auto& d : devices) {
    const HostGpu* h = nullptr;
    for (const auto& g : host)
      if (!d.uuid.empty() && g.uuid == d.uuid) h = &g;
    if (!h)
      return why = "device '" + d.name + "' (uuid '" + d.uuid + "') is not one this host reports outside the container",
             HostKind::none;
    if (h->driver != d.driver)
      return why = "device " + d.uuid + " runs driver " + d.driver + " in the container but " + h->driver +
                   " on the host",
             HostKind::none;
  }
  return HostKind::hardware;
}

std::string values(const json& v) { return v.is_null() ? "none" : v.dump(); }

// "relu gpu:0 WRONG got [0.5,…] want [0,…]" / "add gpu:0 ok" / "conv2d gpu:0 raised TypeError: …"
std::string check_line(const json& c) {
  std::string head = str(c, "op") + " " + str(c, "device");
  if (!str(c, "error").empty()) return head + " raised " + str(c, "error");
  if (member(c, "ok") == true) return head + " ok";
  return head + " WRONG got " + values(member(c, "found")) + " want " + values(member(c, "expected"));
}

std::vector<std::string> checks_of(const json& probe) {
  std::vector<std::string> out;
  const json& checks = member(section(probe, "paddle"), "checks");
  if (checks.is_array())
    for (const auto& c : checks)
      if (c.is_object()) out.push_back(check_line(c));
  return out;
}

// Paddle's answers on the GPU: every check right and run on a GPU device.
void recheck_results(const json& probe, std::vector<std::string>& why) {
  const json& checks = member(section(probe, "paddle"), "checks");
  if (!checks.is_array() || checks.empty()) {
    why.push_back(
        "paddle: no result checks in the document: run_check's \"works well\" is not a result (an H100 running "
        "Paddle 2.6.2 said it and computed zeros)");
    return;
  }
  for (const auto& c : checks) {
    if (!c.is_object()) continue;
    if (str(c, "device").rfind("gpu", 0) != 0)
      why.push_back("paddle: check " + str(c, "op") + " ran on " + str(c, "device") + ", not on the GPU");
    else if (member(c, "ok") != true)
      why.push_back("paddle computes wrong results: " + check_line(c));
  }
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

std::string SmokeEvidence::summary() const { return strings::printable(summary_text()); }

std::string SmokeEvidence::summary_text() const {
  std::string day = time.substr(0, 10);
  if (host == HostKind::none)
    return "none: the GPU part never ran (" + (host_why.empty() ? std::string("no GPU device") : host_why) + ")" +
           (day.empty() ? "" : ", " + day);
  if (host == HostKind::test_double)
    return "test-double (imgtool's driver double, not hardware)" + (day.empty() ? "" : ", " + day) +
           ": the GPU part never ran on hardware";
  std::string s = "hardware, " + std::to_string(devices.size()) + "× " + (devices.empty() ? "" : devices[0].name);
  if (!devices.empty() && !devices[0].driver.empty()) s += ", driver " + devices[0].driver;
  if (!day.empty()) s += ", " + day;
  if (verdict != "pass") s += " (verdict " + verdict + ")";
  if (!bound) s += " (unbound: " + (host_why.empty() ? std::string("not from a run imgtool made") : host_why) + ")";
  if (pod) s += " on node " + pod->node + " (pod " + pod->name + ")";
  if (!source.empty()) s += " [" + source + "]";
  return s;
}

HostKind host_kind(const RunFacts& run, const std::vector<EvidenceDevice>& devices, bool kernels, std::string* why) {
  std::string w;
  HostKind k = HostKind::hardware;
  if (!run.gpus_passed)
    w = "no --gpus on the run", k = HostKind::none;
  else if (run.mode == GpuHost::none)
    w = "--gpu-host none", k = HostKind::none;
  else if (run.mode == GpuHost::test_double)
    k = HostKind::test_double;
  else if (devices.empty())
    w = "the probe saw no GPU device", k = HostKind::none;
  else if (claimed_host(json::object(), devices) == HostKind::test_double)
    k = HostKind::test_double;
  else if (!kernels)
    w = "the probe's CUDA kernels did not run", k = HostKind::none;
  else if (run.pod)
    k = pod_kind(*run.pod, devices, w);
  else if (!run.host_gpus)
    w = "this host's own GPU list (nvidia-smi) could not be read: nothing outside the container vouches for the "
        "devices",
    k = HostKind::none;
  else
    k = local_kind(*run.host_gpus, devices, w);
  if (why) *why = k == HostKind::hardware ? "" : w;
  return k;
}

std::vector<std::string> recheck_document(const json& probe, const std::string& variant, HostKind host) {
  std::vector<std::string> why;
  std::string own = str(section(probe, "verdict"), "status");
  if (own != "pass") why.push_back("the probe's verdict is '" + (own.empty() ? std::string("none") : own) + "'");
  // Without hardware the document's verdict is all there is (the GPU part did not run here); a cpu
  // image's Paddle must have worked; a gpu image on hardware rests on every GPU section.
  bool hardware_gpu = variant == "gpu" && host == HostKind::hardware;
  std::vector<const char*> required;
  if (hardware_gpu) required = {"driver", "kernels", "blas", "paddle"};
  if (variant == "cpu") required = {"paddle"};
  for (const char* name : required) {
    std::string st = str(section(probe, name), "status");
    if (st != "ok" && !(variant == "cpu" && st == "warn"))
      why.push_back(std::string(name) + ": expected ok, found " + (st.empty() ? "no section" : st) +
                    (str(section(probe, name), "reason").empty() ? "" : ": " + str(section(probe, name), "reason")));
  }
  if (hardware_gpu) recheck_results(probe, why);
  return why;
}

namespace {

std::string variant_of(const json& probe) {
  std::string v = str(section(probe, "expect"), "variant");
  return v.empty() ? str(section(probe, "verdict"), "expect_variant") : v;
}

SmokeEvidence document_facts(const json& probe, const std::string& source) {
  SmokeEvidence e;
  e.devices = devices_of(probe);
  e.sections = sections_of(probe);
  e.metrics = metrics_of(probe);
  e.checks = checks_of(probe);
  const json& p = section(probe, "probe");
  e.probe_version = p.contains("version") ? p["version"].dump() : "";
  e.time = str(p, "started");
  e.nonce = str(p, "nonce");
  e.source = source;
  return e;
}

}  // namespace

SmokeEvidence evidence_from_probe(const json& probe, const std::string& source) {
  SmokeEvidence e = document_facts(probe, source);
  e.host = claimed_host(probe, e.devices);
  e.verdict = recheck_document(probe, variant_of(probe), e.host).empty() ? "pass" : "fail";
  e.host_why = "a bare document: nothing imgtool ran or checked says where it ran";
  return e;
}

SmokeEvidence evidence_of_run(const json& probe, const RunFacts& run, const std::string& variant,
                              const std::string& source) {
  SmokeEvidence e = document_facts(probe, source);
  e.bound = true;
  e.host = lower(host_kind(run, e.devices, kernels_ran(probe), &e.host_why), claimed_host(probe, e.devices));
  e.verdict = recheck_document(probe, variant, e.host).empty() ? "pass" : "fail";
  e.pod = run.pod;
  if (run.pod) e.nonce = run.pod->nonce;
  return e;
}

RunFacts run_facts_from_json(const json& j) {
  RunFacts r;
  r.mode = parse_gpu_host(str(j, "mode").empty() ? "gpu" : str(j, "mode"));
  r.gpus_passed = member(j, "gpus_passed") == true;
  if (j.contains("host_gpus") && j["host_gpus"].is_array()) {
    r.host_gpus.emplace();
    for (const auto& g : j["host_gpus"]) r.host_gpus->push_back({str(g, "uuid"), str(g, "name"), str(g, "driver")});
  }
  return r;
}

json to_json(const RunFacts& r) {
  json j = {{"mode", gpu_host_mode(r.mode).name}, {"gpus_passed", r.gpus_passed}};
  if (r.host_gpus) {
    j["host_gpus"] = json::array();
    for (const auto& g : *r.host_gpus)
      j["host_gpus"].push_back({{"uuid", g.uuid}, {"name", g.name}, {"driver", g.driver}});
  }
  return j;
}

SmokeEvidence evidence_of_result(const SmokeResult& r, const std::string& profile) {
  SmokeEvidence e = evidence_of_run(r.probe, r.run, r.expect_variant);
  e.image = r.image.id;
  e.argv = r.argv;
  e.gpus = flag_value(e.argv, "--gpus");
  e.shm_size = flag_value(e.argv, "--shm-size");
  e.profile = profile;
  if (!r.passed()) e.verdict = "fail";  // lower only
  return e;
}

SmokeEvidence evidence_from_result(const json& result, const std::string& profile) {
  const json probe = result.value("probe", json());
  std::string variant = result.contains("expect") ? str(result["expect"], "variant") : "";
  SmokeEvidence e = result.contains("run") && result["run"].is_object()
                        ? evidence_of_run(probe, run_facts_from_json(result["run"]), variant)
                        : evidence_from_probe(probe, "");
  if (result.contains("image")) e.image = str(result["image"], "id");
  if (result.contains("docker") && result["docker"].contains("argv") && result["docker"]["argv"].is_array())
    for (const auto& a : result["docker"]["argv"])
      if (a.is_string()) e.argv.push_back(a.get<std::string>());
  e.gpus = flag_value(e.argv, "--gpus");
  e.shm_size = flag_value(e.argv, "--shm-size");
  e.profile = profile;
  if (result.contains("verdict") && str(result["verdict"], "status") != "pass") e.verdict = "fail";  // lower only
  return e;
}

std::string utc_text(std::time_t t) { return strings::utc_rfc3339(t); }

SmokeEvidence stamped(SmokeEvidence e, const std::string& image_id) {
  e.image = image_id;
  e.attested = utc_text(std::time(nullptr));
  return e;
}

nlohmann::ordered_json to_predicate(const SmokeEvidence& e) {
  nlohmann::ordered_json p;
  p["host"] = to_string(e.host);
  p["bound"] = e.bound;
  p["host_why"] = e.host_why;
  p["devices"] = nlohmann::ordered_json::array();
  for (const auto& d : e.devices)
    p["devices"].push_back(
        {{"name", d.name}, {"cc", d.cc}, {"driver", d.driver}, {"cuda_driver", d.cuda_driver}, {"uuid", d.uuid}});
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
  p["attested"] = e.attested;
  p["nonce"] = e.nonce;
  p["image"] = e.image;
  p["checks"] = e.checks;
  if (e.pod)
    p["pod"] = {{"name", e.pod->name},         {"node", e.pod->node}, {"gpu_product", e.pod->gpu_product},
                {"image_id", e.pod->image_id}, {"gpus", e.pod->gpus}, {"nonce", e.pod->nonce}};
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
    e.devices.push_back({str(d, "name"), str(d, "cc"), str(d, "driver"), str(d, "cuda_driver"), str(d, "uuid")});
  for (const auto& a : need(p, "argv", t::array, "array"))
    if (a.is_string()) e.argv.push_back(a.get<std::string>());
  for (const auto& s : need(p, "sections", t::array, "array"))
    e.sections.push_back({str(s, "name"), str(s, "status"), str(s, "reason")});
  for (const auto& m : need(p, "metrics", t::array, "array"))
    e.metrics.push_back({str(m, "metric"), str(m, "unit"), str(m, "device"),
                         member(m, "value").is_number() ? member(m, "value").get<double>() : 0.0});
  e.verdict = need(p, "verdict", t::string, "string").get<std::string>();
  e.gpus = str(p, "gpus");
  e.shm_size = str(p, "shm_size");
  e.profile = str(p, "profile");
  e.probe_version = str(p, "probe_version");
  e.time = str(p, "time");
  e.source = str(p, "source");
  // Written before bound evidence existed: such an attestation is read, never counted as bound.
  e.bound = p.contains("bound") && p["bound"].is_boolean() && p["bound"].get<bool>();
  e.host_why = str(p, "host_why");
  e.attested = str(p, "attested");
  e.nonce = str(p, "nonce");
  e.image = str(p, "image");
  if (p.contains("checks") && p["checks"].is_array())
    for (const auto& c : p["checks"])
      if (c.is_string()) e.checks.push_back(c.get<std::string>());
  if (p.contains("pod") && p["pod"].is_object()) {
    const json& d = p["pod"];
    e.pod = PodFacts{str(d, "name"),     str(d, "node"),     str(d, "gpu_product"),
                     str(d, "image_id"), d.value("gpus", 0), str(d, "nonce")};
  }
  return e;
}

}  // namespace imgtool::smoke
