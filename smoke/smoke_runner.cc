#include "smoke/smoke_runner.h"

#include <unistd.h>

#include <atomic>

#include "core/error.h"
#include "core/json_file.h"
#include "core/paths.h"
#include "core/strings.h"
#include "matrix/label_claims.h"
#include "matrix/labels.h"

namespace imgtool::smoke {
namespace {

using nlohmann::json;

const char* kMount = "/imgtool-probe";

std::string container_name() {
  static std::atomic<int> n{0};
  return "imgtool-smoke-" + std::to_string(::getpid()) + "-" + std::to_string(++n);
}

// Every string of the probe's document (keys too) through strings::printable: the probe runs
// in the image, so its reasons and names reach terminals, reports and records as untrusted text.
// The document was parsed bounded (kMaxJsonDepth); `depth` keeps this walk bounded on its own.
json printable_json(const json& j, int depth = 0) {
  if (j.is_string()) return strings::printable(j.get<std::string>());
  if ((j.is_array() || j.is_object()) && depth >= kMaxJsonDepth) return nullptr;
  if (j.is_array()) {
    json out = json::array();
    for (auto& v : j) out.push_back(printable_json(v, depth + 1));
    return out;
  }
  if (!j.is_object()) return j;
  json out = json::object();
  for (auto& [k, v] : j.items()) out[strings::printable(k)] = printable_json(v, depth + 1);
  return out;
}

// The probe prints one JSON document between its sentinel lines; an older probe printed it bare
// (then: from the first '{', anything before it tolerated).
json parse_probe(const std::string& out) {
  auto text = probe_document_text(out, false);
  if (!text) return nullptr;
  json doc = parse_json_or_discarded(*text);
  return doc.is_discarded() ? json(nullptr) : printable_json(doc);
}

std::vector<std::string> strings(const json& arr) {
  std::vector<std::string> v;
  if (arr.is_array())
    for (auto& s : arr) v.push_back(s.is_string() ? s.get<std::string>() : s.dump());
  return v;
}

// NVIDIA Container Toolkit <= 1.17.7 (CVE-2025-23266, "NVIDIAScape") runs its enable-cuda-compat
// hook as root on the HOST with the container's environment: an image's ENV LD_PRELOAD is loaded
// there, whatever imgtool's fence. A GPU run of an image nobody has vetted must not hand it that:
// LD_PRELOAD, or any LD_* but LD_LIBRARY_PATH (LD_AUDIT, LD_LIBRARY_PATH's cousins), refuses the run.
void refuse_loader_env(const ImageFacts& f) {
  for (const auto& kv : f.env) {
    std::string name = kv.substr(0, kv.find('='));
    if (name.rfind("LD_", 0) != 0 || name == "LD_LIBRARY_PATH") continue;
    throw CheckFailed("smoke " + f.ref + ": refusing to run it with --gpus: its config sets " +
                      strings::printable(name) +
                      " -- with NVIDIA Container Toolkit <= 1.17.7 (CVE-2025-23266) the runtime's hook loads it as "
                      "root on the host. Fix: remove the ENV from the image (a library it needs belongs in "
                      "ld.so.conf.d), and run `imgtool doctor` to check the toolkit");
  }
}

void resolve_expectations(SmokeOptions& opt, const ImageFacts& facts) {
  if (opt.expect_variant.empty()) opt.expect_variant = facts.variant;
  if (opt.expect_cuda.empty()) opt.expect_cuda = facts.cuda;
  if (opt.expect_archs.empty()) opt.expect_archs = facts.cuda_archs;
  if (!opt.expect_variant.empty() && opt.expect_variant != "gpu" && opt.expect_variant != "cpu")
    throw InputError("--expect-variant: expected gpu or cpu, found '" + opt.expect_variant + "'");
  if (opt.probe_dir.empty()) opt.probe_dir = data_dir() + "/smoke/probe";
}

}  // namespace

json SmokeResult::to_json() const {
  json j = {{"image", {{"ref", image.ref}, {"id", image.id}, {"digest", image.digest}, {"tag", image.tag}}},
            {"expect", {{"variant", expect_variant}, {"cuda", expect_cuda}}},
            {"docker", {{"argv", argv}, {"exit", docker_exit}, {"timed_out", timed_out}}},
            {"verdict", {{"status", verdict}, {"reasons", reasons}, {"warnings", warnings}}},
            {"run", smoke::to_json(run)},
            {"binding", binding},
            {"probe", probe}};
  if (host)
    j["host_diagnosis"] = {{"code", host->code},
                           {"summary", host->summary},
                           {"fix", host->fix},
                           {"evidence", host->evidence},
                           {"retryable", host->retryable}};
  if (!host && probe.is_null()) j["docker"]["stderr"] = docker_stderr.substr(0, 4000);
  return j;
}

ImageFacts inspect_image(const std::string& image, engine::Engine& docker) {
  auto i = docker.inspect(image);
  if (!i)
    throw Error("docker image inspect " + image +
                ": expected an image present locally, found none in the engine"
                " (fix: build or pull it first)");
  matrix::LabelClaims l = matrix::read_label_claims(i->labels);
  ImageFacts f;
  f.ref = image;
  f.id = i->id;
  f.digest = i->repo_digests.empty() ? f.id : i->repo_digests.front();
  f.tag = l.tag.empty() ? image : l.tag;
  f.variant = l.variant;
  f.cuda = l.cuda;
  f.cuda_archs = l.cuda_archs;
  f.claims = l;
  f.env = i->env;
  f.created = i->created;
  return f;
}

engine::RunRequest smoke_request(const SmokeOptions& opt, const std::string& name) {
  engine::RunRequest r{
      .image = opt.image,
      .name = name,
      .gpus = opt.gpus,
      .shm_size = opt.shm_size,
      .flags = engine::admit_flags(opt.run_flags).admitted,
      .mounts = {{opt.probe_dir, kMount, true}},
      .entrypoint = opt.python,
      .args = {std::string(kMount) + "/probe.py", "--gpus-requested", opt.gpus.empty() ? "none" : opt.gpus},
      .timeout = opt.timeout};
  if (!opt.expect_variant.empty()) r.args.insert(r.args.end(), {"--expect-variant", opt.expect_variant});
  if (!opt.expect_cuda.empty()) r.args.insert(r.args.end(), {"--expect-cuda", opt.expect_cuda});
  if (!opt.expect_archs.empty()) r.args.insert(r.args.end(), {"--expect-archs", opt.expect_archs});
  if (opt.gpu_host != GpuHost::gpu) r.args.insert(r.args.end(), {"--gpu-host", gpu_host_mode(opt.gpu_host).name});
  r.args.insert(r.args.end(), opt.probe_args.begin(), opt.probe_args.end());
  return r;
}

std::vector<std::string> docker_run_argv(const SmokeOptions& opt, const std::string& name) {
  return engine::run_argv(smoke_request(opt, name));
}

namespace {

// Run-profile flags the engine's fence refuses are left out of the run, and said so.
std::vector<std::string> refused_flag_warnings(const SmokeOptions& opt) {
  std::vector<std::string> w;
  for (const auto& f : engine::admit_flags(opt.run_flags).refused)
    w.push_back("run profile: '" + f +
                "' not applied: the smoke never widens an image's isolation "
                "(no network, no capability, no host namespace; engine/engine.h)");
  return w;
}

}  // namespace

std::optional<std::string_view> probe_document_text(std::string_view out, bool require_sentinels) {
  size_t begin = out.find(kDocumentBegin);
  if (begin != std::string_view::npos && (begin == 0 || out[begin - 1] == '\n')) {
    size_t from = out.find('\n', begin);
    size_t end = from == std::string_view::npos ? from : out.find(std::string("\n") + kDocumentEnd, from);
    if (end == std::string_view::npos) return std::nullopt;  // cut short: no document
    return out.substr(from + 1, end - from);
  }
  if (require_sentinels) return std::nullopt;
  size_t start = out.find('{');
  if (start == std::string_view::npos) return std::nullopt;
  return out.substr(start);
}

BindingFacts binding_facts(const ImageFacts& f, const std::string& nonce) {
  std::string created = f.created.size() >= 19 ? f.created.substr(0, 19) + "Z" : "";
  return {.claims = f.claims,
          .image_id = f.id,
          .created = parse_utc(created),
          .nonce = nonce,
          .require_identity = !f.claims.tag.empty()};
}

void judge_smoke(SmokeResult& res, const RunResult& docker) {
  res.docker_exit = docker.exit_code;
  res.timed_out = docker.timed_out;
  res.docker_stderr = strings::printable_lines(docker.err);  // the image's and the engine's text
  res.probe = docker.timed_out ? json(nullptr) : parse_probe(docker.out);
  if (res.probe.is_object() && res.probe.contains("verdict") && res.probe["verdict"].is_object()) {
    const json& v = res.probe["verdict"];
    // A status that is no string (a hostile document: {"status": 1}) is no pass, never a type_error.
    res.verdict = v.contains("status") && v["status"].is_string() && v["status"] == "pass" ? "pass" : "fail";
    res.reasons = strings(v.value("reasons", json::array()));
    res.warnings = strings(v.value("warnings", json::array()));
    // imgtool's own verdict: the document's can only lower it (evidence.h).
    SmokeEvidence e = evidence_of_run(res.probe, res.run, res.expect_variant);
    if (e.verdict != "pass" && res.verdict == "pass") {
      res.verdict = "fail";
      for (auto& why : recheck_document(res.probe, res.expect_variant, e.host))
        res.reasons.push_back("imgtool: " + why);
    }
    if (docker.err_dropped)
      res.warnings.push_back("container stderr cut at " + std::to_string(engine::kMaxRunOutput) + " bytes (" +
                             std::to_string(docker.err_dropped) + " more dropped): the image's own logging");
    return;
  }
  if (docker.out_dropped && !docker.timed_out)
    res.host = output_cut_failure(docker.out_dropped, engine::kMaxRunOutput);
  else
    res.host = generic_docker_failure(docker.exit_code, docker.timed_out, res.docker_stderr);
  res.verdict = "fail";
  res.reasons = {"host: " + res.host->summary + " (fix: " + res.host->fix + ")"};
}

SmokeResult run_smoke(SmokeOptions opt, engine::Engine& docker) {
  SmokeResult res;
  res.image = inspect_image(opt.image, docker);
  resolve_expectations(opt, res.image);
  // --gpus auto (the default): every GPU for a gpu image, none for a cpu one.
  opt.gpus = resolve_gpus(opt.gpus, opt.expect_variant, opt.gpu_host);
  res.expect_variant = opt.expect_variant;
  res.expect_cuda = opt.expect_cuda;
  engine::RunRequest req = smoke_request(opt, container_name());
  if (!req.gpus.empty() && req.gpus != "none") refuse_loader_env(res.image);
  res.argv = engine::run_argv(req);
  res.run = {.mode = opt.gpu_host, .gpus_passed = !req.gpus.empty() && req.gpus != "none"};
  if (res.run.gpus_passed && opt.gpu_host == GpuHost::gpu)
    res.run.host_gpus = opt.host_gpus ? opt.host_gpus : query_host_gpus();
  judge_smoke(res, docker.run(req));
  if (res.probe.is_object())
    res.binding = binding_contradictions(res.probe, binding_facts(res.image), std::time(nullptr));
  for (auto& w : refused_flag_warnings(opt)) res.warnings.push_back(std::move(w));
  return res;
}

}  // namespace imgtool::smoke
