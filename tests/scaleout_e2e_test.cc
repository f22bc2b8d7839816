// The scale-out release path end to end (issue 31, section 5): the GitHub workflow `imgtool plan
// --emit github --no-gpu-host` writes, run job by job in its `needs` order -- the nightly shards
// (their matrix entries) -> merge -> gpu-smoke -> promote -- each `run:` step under `bash
// --noprofile --norc -eo pipefail` as GitHub runs it, its `${{ … }}` expressions filled in, the
// artifact actions as folder copies. Real: imgtool, the host Docker engine the shards build on,
// one docker-registry on loopback (staging and release namespaces), the CPU cell (Paddle 3.3.1)
// and the GPU cell (PyPI paddlepaddle-gpu 2.6.2 on the CUDA 11.8 base). Doubles: `kubectl`
// (tests/k8s/kubectl: the Jobs' pods run on the test engine, pulled by digest with skopeo) and,
// under it, the NVIDIA hook and driver (tests/gpu_engine/). So the smoke evidence is a test
// double's: the CPU cell is promoted, the GPU cell refused until --allow-without-gpu-smoke (the
// override then shown by verify). A second night on the same runners and the same cluster reuses
// nothing it must not: new Job names, that night's nonce in every result.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>

#include "core/fs.h"
#include "core/strings.h"
#include "sign/keys.h"
#include "tests/gpu_images.h"
#include "tests/registry_fixture.h"

using namespace imgtool::testing;
using imgtool::read_file;
using imgtool::RunResult;
using nlohmann::json;

namespace {

const char* kGpuTag = "2.6.2-gpu-cuda11.8-cudnn8.6";

// The repository the workflow's checkout gives every job: one matrix with both cells.
void write_repo(const fs::path& repo) {
  fs::create_directories(repo / "matrix");
  imgtool::write_file_atomic(
      repo / "matrix/nightly.yaml",
      R"(# The CPU cell and the GPU cell (matrix/local.yaml and matrix/local-gpu.yaml) in one matrix.
description: "scale-out end-to-end test"
repository: paddle-local
include:
  - variant: cpu
    paddle: "3.3.1"
    python: "3.11"
    os: debian12
    flavor: runtime
    python_from: base
    base_image: "${IMGTOOL_TEST_BASE}"
    wheelhouse: "${IMGTOOL_WHEELHOUSE}"
  - variant: gpu
    paddle: "2.6.2"
    cuda: "11.8"
    trt: none
    python: "3.11"
    os: debian12
    flavor: runtime
    python_from: base
    cuda_base: wheels
    base_image: "${IMGTOOL_CUDA_BASE}"
    wheelhouse: "${IMGTOOL_GPU_WHEELHOUSE}"
)");
}

std::string text(const YAML::Node& n) { return n && n.IsScalar() ? n.Scalar() : ""; }

std::vector<std::string> needs_of(const YAML::Node& job) {
  std::vector<std::string> out;
  if (!job["needs"]) return out;
  if (job["needs"].IsScalar()) return {job["needs"].Scalar()};
  for (auto n : job["needs"]) out.push_back(n.Scalar());
  return out;
}

// A runner of GitHub Actions workflows in miniature: what the emitted workflow uses and nothing
// else (an expression, action or condition it does not know fails the test, so a new one in the
// emitter cannot pass unseen).
struct MiniActions {
  fs::path repo, night;                              // night/: artifacts/, jobs/<job>-<i>/
  std::map<std::string, std::string> vars, secrets;  // ${{ vars.X }}, ${{ secrets.X }}
  std::map<std::string, std::string> env;            // the runner's own environment (PATH, caches)
  std::map<std::string, std::string> runner_cache;   // per runner ("nightly-1"): its IMGTOOL_CACHE
  std::map<std::string, RunResult> results;          // "<job>" or "<job>-<i>": the job's last failing/any step
  std::map<std::string, bool> ok;                    // per job name: every instance passed
  std::string log;
  // Called around each job (by name): the test engine is held only while the gpu-smoke job runs.
  std::function<void(const std::string&, std::map<std::string, std::string>&)> before_job;
  std::function<void(const std::string&)> after_job;

  std::string expand(const std::string& s, const std::map<std::string, std::string>& matrix) const {
    static const std::regex expr(R"(\$\{\{\s*([a-z_]+)\.([A-Za-z0-9_]+)\s*\}\})");
    std::string out;
    auto begin = std::sregex_iterator(s.begin(), s.end(), expr);
    size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      const auto& m = *it;
      const auto& table = m[1] == "matrix" ? matrix : m[1] == "vars" ? vars : secrets;
      REQUIRE_MESSAGE((m[1] == "matrix" || m[1] == "vars" || m[1] == "secrets"), "unknown context in " << s);
      auto v = table.find(m[2]);
      REQUIRE_MESSAGE(v != table.end(), "no value for " << m.str());
      out += s.substr(last, m.position() - last) + v->second;
      last = m.position() + m.length();
    }
    return out + s.substr(last);
  }

  static void copy_tree(const fs::path& from, const fs::path& to) {
    fs::create_directories(to);
    fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  }

  // One `uses:` step; false = the step failed.
  bool action(const YAML::Node& step, const fs::path& ws, const std::map<std::string, std::string>& matrix) {
    std::string uses = text(step["uses"]);
    YAML::Node with = step["with"];
    fs::path artifacts = night / "artifacts";
    if (uses == "actions/checkout@v4") {
      copy_tree(repo, ws);
      return true;
    }
    if (uses == "actions/upload-artifact@v4") {
      fs::path src = ws / expand(text(with["path"]), matrix);
      if (!fs::exists(src)) return true;  // if-no-files-found: warn (the default)
      copy_tree(src, artifacts / expand(text(with["name"]), matrix));
      return true;
    }
    if (uses == "actions/download-artifact@v4") {
      fs::path dst = ws / expand(text(with["path"]), matrix);
      if (with["name"]) {
        fs::path a = artifacts / expand(text(with["name"]), matrix);
        if (!fs::exists(a)) return false;  // "Artifact not found"
        copy_tree(a, dst);
        return true;
      }
      std::regex glob(std::regex_replace(text(with["pattern"]), std::regex(R"(\*)"), ".*"));
      for (auto& a : fs::directory_iterator(artifacts))  // one folder per artifact (merge-multiple: false)
        if (std::regex_match(a.path().filename().string(), glob)) copy_tree(a.path(), dst / a.path().filename());
      return true;
    }
    FAIL("the emitted workflow uses an action this runner does not know: " << uses);
    return false;
  }

  bool run_step(const YAML::Node& step, const fs::path& ws, const std::map<std::string, std::string>& matrix,
                const std::string& runner, const std::string& key) {
    REQUIRE(text(step["shell"]) == "bash");
    std::map<std::string, std::string> e = env;
    if (runner_cache.count(runner)) e["IMGTOOL_CACHE"] = runner_cache.at(runner);
    for (auto kv : step["env"]) e[kv.first.Scalar()] = expand(kv.second.Scalar(), matrix);
    std::string script = expand(text(step["run"]), matrix);
    RunResult r = imgtool::run({"bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script},
                               {.timeout = std::chrono::seconds(3000), .env = e, .cwd = ws.string()});
    log += "### " + key + ": " + text(step["name"]) + " (exit " + std::to_string(r.exit_code) + ")\n" + r.out + r.err;
    results[key] = r;
    return r.exit_code == 0;
  }

  // One job instance: its steps in order; after a failure only `if: always()` steps run.
  bool job(const std::string& name, const YAML::Node& j, const std::map<std::string, std::string>& matrix,
           const std::string& key) {
    fs::path ws = night / "jobs" / key;
    fs::create_directories(ws);
    if (before_job) before_job(name, env);
    bool passed = true;
    for (auto step : j["steps"]) {
      std::string cond = text(step["if"]);
      REQUIRE_MESSAGE((cond.empty() || cond == "always()"), "unknown step condition " << cond);
      if (!passed && cond != "always()") continue;
      bool s = step["uses"] ? action(step, ws, matrix) : run_step(step, ws, matrix, key, key);
      passed = passed && s;
    }
    if (after_job) after_job(name);
    return passed;
  }

  // The whole workflow: jobs in `needs` order; a job whose needs failed is skipped unless `if: always()`.
  void run(const YAML::Node& wf) {
    std::vector<std::string> done;
    std::map<std::string, YAML::Node> jobs;
    for (auto j : wf["jobs"]) jobs[j.first.Scalar()] = j.second;
    while (done.size() < jobs.size()) {
      bool progressed = false;
      for (auto& [name, j] : jobs) {
        if (std::find(done.begin(), done.end(), name) != done.end()) continue;
        auto needs = needs_of(j);
        if (!std::all_of(needs.begin(), needs.end(),
                         [&](auto& n) { return std::find(done.begin(), done.end(), n) != done.end(); }))
          continue;
        std::string cond = text(j["if"]);
        // always() and !cancelled() are the same here: this runner never cancels a run.
        REQUIRE_MESSAGE((cond.empty() || cond == "always()" || cond == "!cancelled()"),
                        "unknown job condition " << cond);
        bool needs_ok = std::all_of(needs.begin(), needs.end(), [&](auto& n) { return ok[n]; });
        bool passed = true;
        if (!needs_ok && cond.empty()) {
          passed = false;
          log += "### " + name + ": skipped (a job it needs failed)\n";
        } else if (j["strategy"]["matrix"]["include"]) {
          for (auto entry : j["strategy"]["matrix"]["include"]) {
            std::map<std::string, std::string> m;
            for (auto kv : entry) m[kv.first.Scalar()] = kv.second.Scalar();
            passed = job(name, j, m, name + "-" + m.at("index")) && passed;
          }
        } else {
          passed = job(name, j, {}, name);
        }
        ok[name] = passed;
        done.push_back(name);
        progressed = true;
      }
      REQUIRE_MESSAGE(progressed, "the workflow's needs form a cycle or name a missing job");
    }
  }
};

json report_of(const fs::path& p) { return json::parse(read_file(p / "nightly.json")); }

const json& cell_of(const json& rep, const std::string& tag) {
  for (auto& c : rep["cells"])
    if (c["tag"] == tag) return c;
  FAIL("no cell " << tag << " in the report");
  static json none;
  return none;
}

// The Jobs the kubectl double was given (its state folder), by name.
std::vector<std::string> double_jobs(const fs::path& state) {
  std::vector<std::string> names;
  if (fs::exists(state / "jobs"))
    for (auto& e : fs::directory_iterator(state / "jobs")) names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct Scaleout {
  ScratchDir dir{"scaleout"};
  RegistryServer reg{RegistryServer::Mode::kHttp, "scaleout"};
  // The test engine (its lock serialises every GPU test) is taken only for the gpu-smoke jobs, the one
  // place its pods run, so the GPU tests beside this one are not kept waiting through the builds and pushes.
  std::optional<GpuEngine> engine;
  std::string pem;
  fs::path pub, kubectl_state;
  std::map<std::string, std::string> env;

  Scaleout() {
    auto key = imgtool::sign::generate_key();
    imgtool::sign::write_key_pair(*key, dir.path / "keys" / "release", "");
    pem = read_file(dir.path / "keys" / "release.key");
    pub = dir.path / "keys" / "release.pub";
    kubectl_state = dir.path / "cluster";
    fs::create_directories(dir.path / "bin");
    fs::create_symlink(imgtool_bin(), dir.path / "bin" / "imgtool");
    fs::create_symlink(source_dir() + "/tests/k8s/kubectl", dir.path / "bin" / "kubectl");
    write_repo(dir.path / "repo");
    env = gpu_matrix_env();
    gpu_cell_image();  // built (or found) on the host engine, where the shards build
    env["IMGTOOL_TEST_BASE"] = base_image();
    env["IMGTOOL_WHEELHOUSE"] = wheelhouse();
    env["PATH"] = (dir.path / "bin").string() + ":" + env_or("PATH", "/usr/bin:/bin");
    env["HOME"] = env_or("HOME", "/root");
    env["KUBECTL_DOUBLE_STATE"] = kubectl_state.string();
    env["KUBECTL_DOUBLE_TLS_VERIFY"] = "false";  // the loopback registry speaks plain http
  }

  YAML::Node workflow() {
    auto r = imgtool::testing::imgtool({"plan", "matrix/nightly.yaml", "--emit", "github", "--shards", "2",
                                        "--no-gpu-host", "--out", ".github/workflows"},
                                       {.env = env, .cwd = (dir.path / "repo").string()});
    REQUIRE_MESSAGE(r.ok(), r.err);
    return YAML::LoadFile((dir.path / "repo/.github/workflows/imgtool-nightly.yml").string());
  }

  // One night: a fresh workspace and artifact store; the same runners (their caches) and cluster.
  MiniActions night(const std::string& name, const YAML::Node& wf) {
    MiniActions a;
    a.repo = dir.path / "repo";
    a.night = dir.path / name;
    a.vars = {{"IMGTOOL_REGISTRY", reg.host() + "/ai"}, {"IMGTOOL_STAGING", reg.host() + "/staging"}};
    a.secrets = {{"IMGTOOL_SIGNING_KEY", pem}};
    a.env = env;
    a.before_job = [this](const std::string& job, std::map<std::string, std::string>& e) {
      if (job != "gpu-smoke") return;
      engine.emplace();
      e["KUBECTL_DOUBLE_DOCKER_HOST"] = engine->host;
    };
    a.after_job = [this](const std::string& job) {
      if (job == "gpu-smoke") engine.reset();
    };
    for (int i = 1; i <= 2; ++i) {
      fs::path cache = dir.path / ("runner-" + std::to_string(i));
      if (!fs::exists(cache)) {  // each shard runner knows the GPU cell's build (as gpu_nightly_test's state)
        fs::create_directories(cache);
        fs::permissions(cache, fs::perms::owner_all);
        fs::copy_file(fs::path(cache_root()) / "test-gpu-state" / "state.db", cache / "state.db");
      }
      a.runner_cache["nightly-" + std::to_string(i)] = cache.string();
    }
    a.run(wf);
    return a;
  }
};

}  // namespace

TEST_CASE("the emitted scale-out workflow runs end to end: shards, merge, smoke Jobs, collect, promote; twice") {
  Scaleout s;
  YAML::Node wf = s.workflow();
  REQUIRE(wf["jobs"]["gpu-smoke"]);
  REQUIRE(wf["jobs"]["promote"]);

  // Night 1.
  MiniActions n1 = s.night("night-1", wf);
  INFO(n1.log);
  CHECK(n1.ok["nightly"]);
  CHECK(n1.ok["merge"]);
  // The GPU cell's smoke on the driver double fails (cuBLAS and Paddle's GPU path need a real driver:
  // tests/README.md), so collect -- and the gpu-smoke job -- fail; promote runs all the same.
  CHECK_FALSE(n1.ok["gpu-smoke"]);
  CHECK(n1.log.find("### gpu-smoke: GPU smoke Jobs on the cluster (no signing key here) (exit 0)") !=
        std::string::npos);
  CHECK_FALSE(n1.ok["promote"]);  // the GPU cell is refused: its evidence is a test double's, and failed
  json merged = report_of(n1.night / "artifacts" / "nightly-report");
  CHECK(merged["release"] == s.reg.host() + "/ai");  // merge kept it: promote can find the release registry
  std::string cpu_tag;
  for (auto& c : merged["cells"])
    if (c["tag"] != kGpuTag) cpu_tag = c["tag"];
  REQUIRE(!cpu_tag.empty());
  json smoked = report_of(n1.night / "artifacts" / "nightly-report-smoked");
  const json& gpu = cell_of(smoked, kGpuTag);
  CHECK(gpu["smoke"]["evidence"]["host"] == "test-double");
  CHECK(gpu["smoke"]["evidence"]["bound"] == true);
  // The report shows the attestation as signed: imgtool's clock and the smoked image's ID stamped in.
  CHECK_FALSE(gpu["smoke"]["evidence"]["attested"].get<std::string>().empty());
  CHECK(gpu["smoke"]["evidence"]["image"].get<std::string>().rfind("sha256:", 0) == 0);
  MESSAGE("the bound attestation's predicate (the GPU cell, collected from its smoke Job):\n"
          << gpu["smoke"]["evidence"].dump(1));
  CHECK(gpu["smoke"]["evidence"]["pod"]["image_id"].get<std::string>().find(gpu["publish"]["digest"]) !=
        std::string::npos);
  std::string promote_out = n1.results["promote"].out;
  CHECK(promote_out.find("promoted ") != std::string::npos);
  CHECK(promote_out.find(":" + cpu_tag + ": promoted") != std::string::npos);
  CHECK(promote_out.find("REFUSED") != std::string::npos);
  CHECK(promote_out.find(":" + std::string(kGpuTag) + ": ") != std::string::npos);
  // verify of a release tag as a user on this GPU-less host runs it (the GPU part: --no-gpu-host).
  auto released = [&](const std::string& tag, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"verify", "docker://" + s.reg.host() + "/ai/paddle-local:" + tag, "--key",
                                     s.pub.string()};
    args.insert(args.end(), more.begin(), more.end());
    if (tag == kGpuTag) args.push_back("--no-gpu-host");
    auto r = imgtool::testing::imgtool(args, {.timeout = std::chrono::seconds(1200)});
    MESSAGE("verify " << tag << " -> " << r.exit_code << "\n" << r.out << r.err);
    return r;
  };

  CHECK(released(cpu_tag).ok());
  CHECK_FALSE(released(kGpuTag).ok());  // no release tag for it

  // The override, as a release engineer gives it: promoted, and verify under the same relaxed policy
  // says so.
  auto e = s.env;
  e["IMGTOOL_SIGNING_KEY"] = s.pem;
  auto forced = imgtool::run({"bash", "-c",
                              "imgtool nightly promote --from-report \"$1\" --sign-key env://IMGTOOL_SIGNING_KEY "
                              "--allow-without-gpu-smoke",
                              "promote", (n1.night / "artifacts" / "nightly-report-smoked").string()},
                             {.timeout = std::chrono::seconds(1200), .env = e});
  INFO(forced.out << forced.err);
  CHECK(forced.ok());
  auto v = released(kGpuTag, {"--allow-without-gpu-smoke"});
  CHECK(v.ok());
  CHECK(v.out.find("allow-without-gpu-smoke") != std::string::npos);
  // The default policy (the one promote applied before the override) holds the release to bound
  // hardware evidence: the override does not count for it. (Its contents and SBOM were judged just
  // above: this read of the evidence alone reads no layer.)
  auto strict = released(kGpuTag, {"--no-smoke", "--no-contents", "--no-sbom"});
  CHECK(strict.exit_code == 1);
  CHECK(strict.out.find("FAIL smoke.evidence") != std::string::npos);

  // Night 2: the same runners and cluster; nothing changed, so nothing is rebuilt, and the smoke
  // Jobs get new names (the night's nonce) instead of clashing with last night's.
  auto jobs1 = double_jobs(s.kubectl_state);
  MiniActions n2 = s.night("night-2", wf);
  INFO(n2.log);
  CHECK(n2.ok["nightly"]);
  CHECK(n2.log.find("### gpu-smoke: GPU smoke Jobs on the cluster (no signing key here) (exit 0)") !=
        std::string::npos);
  CHECK(n2.log.find("field is immutable") == std::string::npos);
  auto jobs2 = double_jobs(s.kubectl_state);
  CHECK(jobs2.size() == jobs1.size() * 2);  // tonight's beside last night's, none reused
  std::string nonce2 = imgtool::strings::trim(
      read_file(n2.night / "jobs" / "gpu-smoke" / "k8s" / "results" / (std::string(kGpuTag) + ".nonce")));
  std::string nonce1 = imgtool::strings::trim(
      read_file(n1.night / "jobs" / "gpu-smoke" / "k8s" / "results" / (std::string(kGpuTag) + ".nonce")));
  CHECK(nonce1 != nonce2);
  json smoked2 = report_of(n2.night / "artifacts" / "nightly-report-smoked");
  CHECK(cell_of(smoked2, kGpuTag)["smoke"]["evidence"]["nonce"] == nonce2);
  CHECK(cell_of(smoked2, kGpuTag)["publish"]["digest"] == gpu["publish"]["digest"]);  // unchanged image
  CHECK(n2.results["promote"].out.find(":" + cpu_tag + ": promoted") != std::string::npos);
}
