#include "verify/smoke_runner.h"

#include <unistd.h>

#include <atomic>

#include "core/error.h"
#include "core/paths.h"
#include "matrix/labels.h"

namespace imgtool::verify {
namespace {

using nlohmann::json;

const char* kMount = "/imgtool-probe";

std::string label(const json& labels, const char* key) {
  return labels.is_object() && labels.contains(key) && labels[key].is_string() ? labels[key].get<std::string>() : "";
}

std::string container_name() {
  static std::atomic<int> n{0};
  return "imgtool-smoke-" + std::to_string(::getpid()) + "-" + std::to_string(++n);
}

// The probe prints one JSON document on stdout; tolerate anything before it.
json parse_probe(const std::string& out) {
  size_t start = out.find('{');
  if (start == std::string::npos) return nullptr;
  json doc = json::parse(out.substr(start), nullptr, /*allow_exceptions=*/false);
  return doc.is_discarded() ? json(nullptr) : doc;
}

std::vector<std::string> strings(const json& arr) {
  std::vector<std::string> v;
  if (arr.is_array())
    for (auto& s : arr) v.push_back(s.is_string() ? s.get<std::string>() : s.dump());
  return v;
}

void resolve_expectations(SmokeOptions& opt, const ImageFacts& facts) {
  if (opt.expect_variant.empty()) opt.expect_variant = facts.variant;
  if (opt.expect_cuda.empty()) opt.expect_cuda = facts.cuda;
  if (!opt.expect_variant.empty() && opt.expect_variant != "gpu" && opt.expect_variant != "cpu")
    throw InputError("--expect-variant: expected gpu or cpu, found '" + opt.expect_variant + "'");
  if (opt.probe_dir.empty()) opt.probe_dir = data_dir() + "/verify/probe";
}

}  // namespace

json SmokeResult::to_json() const {
  json j = {{"image", {{"ref", image.ref}, {"id", image.id}, {"digest", image.digest},
                       {"tag", image.tag}}},
            {"expect", {{"variant", expect_variant}, {"cuda", expect_cuda}}},
            {"docker", {{"argv", argv}, {"exit", docker_exit}, {"timed_out", timed_out}}},
            {"verdict", {{"status", verdict}, {"reasons", reasons}, {"warnings", warnings}}},
            {"probe", probe}};
  if (host)
    j["host_diagnosis"] = {{"code", host->code}, {"summary", host->summary}, {"fix", host->fix},
                           {"evidence", host->evidence}, {"retryable", host->retryable}};
  if (!host && probe.is_null()) j["docker"]["stderr"] = docker_stderr.substr(0, 4000);
  return j;
}

ImageFacts inspect_image(const std::string& image, const CommandRunner& runner) {
  RunResult r = runner({"docker", "image", "inspect", image}, {.timeout = std::chrono::seconds(60)});
  if (!r.ok())
    throw Error("docker image inspect " + image + ": expected an image present locally, found: " + r.err +
                    " (fix: build or pull it first)",
                r.err.find("Cannot connect") != std::string::npos);
  json arr = json::parse(r.out, nullptr, false);
  if (!arr.is_array() || arr.empty()) throw Error("docker image inspect " + image + ": unreadable output");
  const json& i = arr[0];
  const json labels = i.contains("Config") ? i["Config"].value("Labels", json::object()) : json::object();
  ImageFacts f;
  f.ref = image;
  f.id = i.value("Id", "");
  auto digests = strings(i.value("RepoDigests", json::array()));
  f.digest = digests.empty() ? f.id : digests.front();
  f.tag = label(labels, labels::kTag);
  if (f.tag.empty()) f.tag = image;
  f.variant = label(labels, labels::kVariant);
  f.cuda = label(labels, labels::kCuda);
  return f;
}

std::vector<std::string> docker_run_argv(const SmokeOptions& opt, const std::string& name) {
  std::vector<std::string> a = {"docker", "run", "--rm", "--name", name};
  if (opt.gpus != "none" && !opt.gpus.empty()) a.insert(a.end(), {"--gpus", opt.gpus});
  if (!opt.shm_size.empty()) a.insert(a.end(), {"--shm-size", opt.shm_size});
  a.insert(a.end(), opt.run_flags.begin(), opt.run_flags.end());
  a.insert(a.end(), {"-v", opt.probe_dir + ":" + kMount + ":ro", "--entrypoint", opt.python, opt.image,
                     std::string(kMount) + "/probe.py", "--gpus-requested", opt.gpus.empty() ? "none" : opt.gpus});
  if (!opt.expect_variant.empty()) a.insert(a.end(), {"--expect-variant", opt.expect_variant});
  if (!opt.expect_cuda.empty()) a.insert(a.end(), {"--expect-cuda", opt.expect_cuda});
  if (opt.no_gpu_host) a.push_back("--no-gpu-host");
  a.insert(a.end(), opt.probe_args.begin(), opt.probe_args.end());
  return a;
}

void judge_smoke(SmokeResult& res, const RunResult& docker) {
  res.docker_exit = docker.exit_code;
  res.timed_out = docker.timed_out;
  res.docker_stderr = docker.err;
  res.probe = docker.timed_out ? json(nullptr) : parse_probe(docker.out);
  if (res.probe.is_object() && res.probe.contains("verdict")) {
    const json& v = res.probe["verdict"];
    res.verdict = v.value("status", "fail") == "pass" ? "pass" : "fail";
    res.reasons = strings(v.value("reasons", json::array()));
    res.warnings = strings(v.value("warnings", json::array()));
    return;
  }
  res.host = generic_docker_failure(docker.exit_code, docker.timed_out, docker.err);
  res.verdict = "fail";
  res.reasons = {"host: " + res.host->summary + " (fix: " + res.host->fix + ")"};
}

SmokeResult run_smoke(SmokeOptions opt, const CommandRunner& runner) {
  SmokeResult res;
  res.image = inspect_image(opt.image, runner);
  resolve_expectations(opt, res.image);
  // --gpus auto (the default): every GPU for a gpu image, none for a cpu one.
  if (opt.gpus.empty() || opt.gpus == "auto") opt.gpus = opt.expect_variant == "gpu" && !opt.no_gpu_host ? "all" : "none";
  res.expect_variant = opt.expect_variant;
  res.expect_cuda = opt.expect_cuda;
  std::string name = container_name();
  res.argv = docker_run_argv(opt, name);
  RunResult r = runner(res.argv, {.timeout = opt.timeout});
  if (r.timed_out) runner({"docker", "rm", "-f", name}, {.timeout = std::chrono::seconds(60)});
  judge_smoke(res, r);
  return res;
}

}  // namespace imgtool::verify
