// emit/: every emitted file is checked by the real validator a user's CI or
// cluster would apply — check-jsonschema's vendored GitHub Actions and GitLab CI
// schemas, kubernetes-validate --strict — plus shard stability, determinism
// (byte-identical files) and the bake files' structure (bake's documented
// target attributes; `docker buildx bake --print` when buildx is installed).
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "core/error.h"
#include "core/fs.h"
#include "core/process.h"
#include "emit/bake.h"
#include "emit/ci_matrix.h"
#include "emit/k8s_jobs.h"
#include "emit/plan_emit.h"
#include "matrix/matrix.h"
#include "matrix/testing/cells.h"
#include "nightly/nightly_model.h"
#include "nightly/report.h"
#include "nightly/shard.h"
#include "run/render.h"
#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::emit;
namespace fs = std::filesystem;
namespace fx = imgtool::testing;

namespace {

const std::string kMatrix = fx::source_dir() + "/matrix/paddle.yaml";

// Runs a validator; false (with a message) when it is not installed, so the caller skips.
bool have(const std::string& tool) {
  if (have_program(tool)) return true;
  MESSAGE("SKIPPED: " << tool << " is not installed (scripts/install-deps.sh installs it)");
  return false;
}

void check_valid(const std::vector<std::string>& argv) {
  auto r = run(argv, {.timeout = std::chrono::seconds(300)});
  INFO(argv.back() << "\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
}

PlanEmitResult emit_to(Emit e, const fs::path& out, PlanEmitOptions o = {}) {
  if (o.input.empty()) o.input = kMatrix;
  o.emit = e;
  o.out = out;
  return emit_plan(o);
}

std::vector<std::string> paddle_tags() {
  return {"2.6.2",
          "3.0.0",
          "3.2.0",
          "3.2.0-gpu-cuda12.6-cudnn9.5",
          "3.2.0-gpu-cuda12.9-cudnn9.9",
          "3.1.0-gpu-cuda11.8-cudnn8.9",
          "3.0.0-gpu-cuda12.6-cudnn9.5-trt10.5"};
}

// A nightly report in which `digests` cells were published (for --from-report).
fs::path publish_report(const fs::path& dir, const std::map<std::string, std::string>& digests) {
  nightly::NightlyReport r;
  r.matrix = kMatrix;
  r.registry = "registry.example.com/ai";
  for (auto& [tag, d] : digests) {
    nightly::NightlyCell c;
    c.tag = tag;
    c.variant = "gpu";
    c.build.status = builder::CellStatus::built;
    c.publish.status = nightly::PublishStatus::published;
    c.publish.digest = d;
    c.publish.ref = "registry.example.com/ai/paddle:" + tag;
    r.cells.push_back(c);
  }
  nightly::write_report(dir, r);
  return dir;
}

std::string fake_digest(const std::string& seed) { return "sha256:" + std::string(64, seed[0]); }

}  // namespace

TEST_CASE("github: a sharded workflow that check-jsonschema accepts, byte-identical on re-run") {
  fx::ScratchDir d("emit-gh");
  auto r = emit_to(Emit::github, d.path / "a", {.shards = 3, .registry = "registry.example.com/ai"});
  REQUIRE(r.written.size() == 1);
  fs::path wf = d.path / "a" / "imgtool-nightly.yml";
  emit_to(Emit::github, d.path / "b", {.shards = 3, .registry = "registry.example.com/ai"});
  CHECK(read_file(wf) == read_file(d.path / "b" / "imgtool-nightly.yml"));
  MESSAGE("emitted GitHub workflow:\n" << read_file(wf));

  // Each include entry names the cells `nightly --shard i/n` selects, and every kept cell once.
  YAML::Node doc = YAML::LoadFile(wf.string());
  auto include = doc["jobs"]["nightly"]["strategy"]["matrix"]["include"];
  REQUIRE(include.size() == 3);
  std::set<std::string> all;
  for (auto e : include) {
    auto shard = nightly::parse_shard(e["shard"].as<std::string>());
    CHECK(shard.count == 3);
    CHECK(e["index"].as<int>() == shard.index);
    std::istringstream cells(e["cells"].as<std::string>());
    for (std::string t; cells >> t;) {
      CHECK(nightly::shard_of(t, 3) == shard.index);
      CHECK(all.insert(t).second);
    }
  }
  CHECK(all.size() == 19);  // matrix/paddle.yaml keeps 19 cells
  CHECK(doc["jobs"]["merge"]["needs"].as<std::string>() == "nightly");
  CHECK(doc["jobs"]["merge"]["if"].as<std::string>() == "always()");
  CHECK(doc["jobs"]["nightly"]["strategy"]["fail-fast"].as<bool>() == false);
  std::string run = doc["jobs"]["nightly"]["steps"][1]["run"].as<std::string>();
  CHECK(run.find("imgtool nightly " + kMatrix + " --registry \"registry.example.com/ai\"") != std::string::npos);
  CHECK(run.find("--shard \"$SHARD\"") != std::string::npos);
  if (have("check-jsonschema"))
    check_valid({"check-jsonschema", "--builtin-schema", "vendor.github-workflows", wf.string()});
}

TEST_CASE("gitlab: parallel:matrix pipeline with a merge job, accepted by check-jsonschema") {
  fx::ScratchDir d("emit-gl");
  emit_to(Emit::gitlab, d.path, {.shards = 4, .runs_on = {"gpu-builder"}, .no_gpu_host = true});
  fs::path f = d.path / "imgtool-nightly.gitlab-ci.yml";
  YAML::Node doc = YAML::LoadFile(f.string());
  auto matrix = doc["nightly"]["parallel"]["matrix"];
  REQUIRE(matrix.size() == 4);
  size_t cells = 0;
  for (auto e : matrix) {
    auto shard = nightly::parse_shard(e["SHARD"].as<std::string>());
    CHECK(e["SHARD_INDEX"].as<std::string>() == std::to_string(shard.index));
    std::istringstream in(e["CELLS"].as<std::string>());
    for (std::string t; in >> t; ++cells) CHECK(nightly::shard_of(t, 4) == shard.index);
  }
  CHECK(cells == 19);
  CHECK(doc["nightly"]["script"][0].as<std::string>().find("--registry \"$IMGTOOL_REGISTRY\"") != std::string::npos);
  CHECK(doc["nightly"]["script"][0].as<std::string>().find("--no-gpu-host") != std::string::npos);
  CHECK(doc["nightly"]["script"][0].as<std::string>().rfind("REPORT=\"reports/shard-$SHARD_INDEX\"\n", 0) == 0);
  CHECK(doc["nightly"]["artifacts"]["paths"][0].as<std::string>() == "reports/");
  CHECK(doc["nightly-merge"]["script"][0].as<std::string>() == "imgtool nightly merge reports/shard-* --report report");
  CHECK(doc["nightly-merge"]["needs"][0].as<std::string>() == "nightly");
  CHECK(doc["nightly-merge"]["tags"][0].as<std::string>() == "gpu-builder");
  if (have("check-jsonschema")) check_valid({"check-jsonschema", "--builtin-schema", "vendor.gitlab-ci", f.string()});
  // No GPU on the runners: staging, then the cluster's GPU smoke attested, then the release.
  CHECK(doc["nightly"]["script"][0].as<std::string>().find("--stage-repository \"$IMGTOOL_STAGING\"") !=
        std::string::npos);
  std::string smoke = doc["gpu-smoke"]["script"][0].as<std::string>();
  CHECK(doc["gpu-smoke"]["needs"][0].as<std::string>() == "nightly-merge");
  CHECK(smoke.find("--emit k8s --registry \"$IMGTOOL_STAGING\" --from-report report") != std::string::npos);
  CHECK(smoke.find("kubectl apply -f k8s/") != std::string::npos);
  CHECK(smoke.find("imgtool nightly collect k8s/results/*.json --from-report report --report report --key "
                   "env://IMGTOOL_SIGNING_KEY") != std::string::npos);
  CHECK(doc["promote"]["needs"][0].as<std::string>() == "gpu-smoke");
  CHECK(doc["promote"]["when"].as<std::string>() == "always");  // a failed GPU smoke holds back only its cell
  CHECK(doc["promote"]["script"][0].as<std::string>() ==
        "imgtool nightly promote --from-report report --sign-key env://IMGTOOL_SIGNING_KEY");
}

TEST_CASE(
    "github --no-gpu-host: build -> staging -> GPU smoke Jobs -> attested evidence -> promote, accepted by "
    "check-jsonschema") {
  fx::ScratchDir d("emit-gh-release");
  emit_to(Emit::github, d.path, {.shards = 2, .no_gpu_host = true});
  fs::path wf = d.path / "imgtool-nightly.yml";
  MESSAGE("emitted GitHub release workflow:\n" << read_file(wf));
  YAML::Node doc = YAML::LoadFile(wf.string());
  auto jobs = doc["jobs"];
  CHECK(jobs["gpu-smoke"]["needs"].as<std::string>() == "merge");
  CHECK(jobs["promote"]["needs"].as<std::string>() == "gpu-smoke");
  CHECK(jobs["promote"]["if"].as<std::string>() == "!cancelled()");
  std::string nightly = jobs["nightly"]["steps"][1]["run"].as<std::string>();
  CHECK(nightly.find("--no-gpu-host --stage-repository \"$IMGTOOL_STAGING\"") != std::string::npos);
  // The variable is in that step's environment (without it every shard published straight to release).
  CHECK(jobs["nightly"]["steps"][1]["env"]["IMGTOOL_STAGING"].as<std::string>() == "${{ vars.IMGTOOL_STAGING }}");
  std::string smoke, promote;
  for (auto s : jobs["gpu-smoke"]["steps"])
    if (s["run"]) smoke = s["run"].as<std::string>();
  for (auto s : jobs["promote"]["steps"])
    if (s["run"]) promote = s["run"].as<std::string>();
  CHECK(smoke.find("imgtool nightly collect") != std::string::npos);
  CHECK(smoke.find("--key env://IMGTOOL_SIGNING_KEY") != std::string::npos);
  CHECK(promote == "imgtool nightly promote --from-report report --sign-key env://IMGTOOL_SIGNING_KEY");
  if (have("check-jsonschema"))
    check_valid({"check-jsonschema", "--builtin-schema", "vendor.github-workflows", wf.string()});
}

TEST_CASE("CI matrices: a new cell never moves another cell to a different runner") {
  auto tags = paddle_tags();
  auto before = shard_table(tags, 3);
  tags.push_back("3.3.0-gpu-cuda13.0-cudnn9.13");
  tags.push_back("3.3.0");
  auto after = shard_table(tags, 3);
  std::map<std::string, std::string> was;
  for (auto& e : before)
    for (auto& t : e.tags) was[t] = e.shard.text();
  for (auto& e : after)
    for (auto& t : e.tags)
      if (was.count(t)) CHECK_MESSAGE(was[t] == e.shard.text(), t << " moved");
  // And the emitted workflow says the same: the old cells' entries are unchanged or only gained cells.
  CiOptions o{.matrix = "matrix/paddle.yaml", .shards = 3};
  auto old_doc = YAML::Load(emit_github(paddle_tags(), o)), new_doc = YAML::Load(emit_github(tags, o));
  for (auto e : old_doc["jobs"]["nightly"]["strategy"]["matrix"]["include"]) {
    std::istringstream in(e["cells"].as<std::string>());
    for (std::string t; in >> t;) {
      bool found = false;
      for (auto n : new_doc["jobs"]["nightly"]["strategy"]["matrix"]["include"])
        if (n["shard"].as<std::string>() == e["shard"].as<std::string>())
          found = (" " + n["cells"].as<std::string>() + " ").find(" " + t + " ") != std::string::npos;
      CHECK_MESSAGE(found, t);
    }
  }
  // Fewer cells than runners: n stays n (it is part of every cell's shard); empty shards get no entry.
  auto small = shard_table({"3.2.0", "3.1.0"}, 4);
  CHECK(small.size() <= 2);
  for (auto& e : small) CHECK(e.shard.count == 4);
  CHECK_THROWS_AS(emit_github({}, o), InputError);
  CHECK_THROWS_AS(emit_github(tags, {.matrix = "m", .shards = 0}), InputError);
}

TEST_CASE("bake: one file per shared-stage group, documented target attributes, per-target script") {
  fx::ScratchDir d("emit-bake");
  auto r = emit_to(Emit::bake, d.path / "out", {.registry = "registry.example.com/ai"});
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(d.path / "out"))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 2);
  // bake's documented target attributes (docs.docker.com/build/bake/reference/#target)
  const std::set<std::string> documented = {
      "args",         "annotations", "attest",          "cache-from", "cache-to",
      "context",      "contexts",    "description",     "dockerfile", "dockerfile-inline",
      "entitlements", "inherits",    "labels",          "matrix",     "name",
      "network",      "no-cache",    "no-cache-filter", "output",     "platforms",
      "pull",         "secret",      "shm-size",        "ssh",        "tags",
      "target",       "ulimits"};
  const std::regex target_name("^[a-zA-Z0-9_-]+$");
  std::set<std::string> tags_seen;
  for (auto& f : files) {
    auto j = nlohmann::json::parse(read_file(f));
    CHECK(j.size() == 2);
    auto targets = j["group"]["default"]["targets"];
    REQUIRE(targets.size() == j["target"].size());
    std::set<std::string> stage_keys;
    for (auto& name : targets) {
      REQUIRE(j["target"].contains(name.get<std::string>()));
      CHECK(std::regex_match(name.get<std::string>(), target_name));
      auto t = j["target"][name.get<std::string>()];
      for (auto& kv : t.items()) CHECK_MESSAGE(documented.count(kv.key()), "undocumented attribute " << kv.key());
      fs::path ctx = d.path / "out" / t["context"].get<std::string>();
      CHECK(fs::exists(ctx / "Dockerfile"));
      auto cell = nlohmann::json::parse(read_file(ctx / "cell.json"));
      stage_keys.insert(cell["build"]["stage_key"].get<std::string>());
      std::string tag = t["labels"]["io.imgtool.tag"];
      tags_seen.insert(tag);
      CHECK(t["labels"]["io.imgtool.inputs-hash"] == cell["inputs_hash"]);
      std::string candidate = t["tags"][0];
      CHECK(candidate.rfind("registry.example.com/ai/paddle:" + tag + "-in", 0) == 0);
      CHECK(t["cache-from"][0].get<std::string>().find(
                "type=registry,ref=registry.example.com/ai/paddle:buildcache-") == 0);
      CHECK(t["cache-to"][0].get<std::string>().find(",mode=max") != std::string::npos);
    }
    CHECK(stage_keys.size() == 1);  // one group per file
    CHECK(f.filename().string() == "bake-" + *stage_keys.begin() + ".json");
  }
  CHECK(tags_seen.size() == 19);
  // Determinism: the same input again gives the same bytes.
  emit_to(Emit::bake, d.path / "again", {.registry = "registry.example.com/ai"});
  for (auto& f : files) CHECK(read_file(f) == read_file(d.path / "again" / f.filename()));
  if (have_program("docker") && run({"docker", "buildx", "version"}).ok())
    for (auto& f : files) check_valid({"docker", "buildx", "bake", "-f", f.string(), "--print"});
  else
    MESSAGE("docker buildx is not installed: bake files checked against bake's documented attributes only");
}

TEST_CASE("bake.sh: each target alone, so one failing target cancels nothing; exit 1 names it") {
  fx::ScratchDir d("emit-bake-sh");
  emit_to(Emit::bake, d.path / "out");
  // `docker` on PATH is a stand-in recording each call (buildx cannot run here); it fails one target.
  fs::create_directories(d.path / "bin");
  write_file_atomic(d.path / "bin" / "docker",
                    "#!/bin/sh\necho \"$*\" >> \"$CALLS\"\nfor a in \"$@\"; do last=$a; done\n"
                    "[ \"$last\" = \"3_0_0\" ] && exit 1\nexit 0\n",
                    0755);
  auto r =
      run({"sh", (d.path / "out" / "bake.sh").string(), "--push"},
          {.env = {{"PATH", (d.path / "bin").string() + ":/usr/bin:/bin"}, {"CALLS", (d.path / "calls").string()}}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("bake: failed: 3_0_0") != std::string::npos);
  std::string calls = read_file(d.path / "calls");
  CHECK(std::count(calls.begin(), calls.end(), '\n') == 19);  // every target ran, the failing one included
  CHECK(calls.find("buildx bake -f bake-") == 0);
  CHECK(calls.find("--push 3_2_0-gpu-cuda12_9-cudnn9_9\n") != std::string::npos);
  // Without a registry: local names, no registry cache.
  auto j =
      nlohmann::json::parse(read_file(*std::find_if(fs::directory_iterator(d.path / "out"), fs::directory_iterator(),
                                                    [](auto& e) { return e.path().extension() == ".json"; })));
  for (auto& [name, t] : j["target"].items()) {
    CHECK_FALSE(t.contains("cache-from"));
    CHECK(t["tags"][0].get<std::string>().rfind("paddle:", 0) == 0);
  }
}

TEST_CASE(
    "k8s: one smoke Job per gpu cell, by digest, GPU node, probe in a ConfigMap; kubernetes-validate accepts them") {
  fx::ScratchDir d("emit-k8s");
  auto kb = matrix::KnowledgeBase::load_default();
  std::vector<CellImage> cells;
  matrix::Cell c = matrix::testing::cell("3.2.0-gpu-cuda12.6-cudnn9.5", "gpu");
  cells.push_back({c, fake_digest("b")});
  std::string probe = read_file(fx::source_dir() + "/smoke/probe/probe.py");
  auto files = smoke_jobs(
      cells, {.registry = "registry.example.com/ai", .gpu_model = "H100", .probe_text = probe, .nonce = "0123456789ab"},
      kb);
  REQUIRE(files.size() == 4);
  for (auto& f : files) write_file_atomic(d.path / f.name, f.text, f.mode);

  YAML::Node cm = YAML::LoadFile((d.path / "configmap-probe.yaml").string());
  CHECK(cm["data"]["probe.py"].as<std::string>() == probe);  // the probe, byte for byte
  std::string job_file =
      (d.path / ("job-" + smoke_job_name(c.tag, fake_digest("b"), "0123456789ab") + ".yaml")).string();
  YAML::Node job = YAML::LoadFile(job_file);
  auto pod = job["spec"]["template"]["spec"];
  auto ctr = pod["containers"][0];
  CHECK(ctr["image"].as<std::string>() == "registry.example.com/ai/paddle@" + fake_digest("b"));
  CHECK(ctr["resources"]["limits"]["nvidia.com/gpu"].as<std::string>() == "1");
  CHECK(pod["nodeSelector"]["nvidia.com/gpu.present"].as<std::string>() == "true");
  CHECK(pod["nodeSelector"]["nvidia.com/gpu.product"].as<std::string>().find("H100") != std::string::npos);
  CHECK(pod["restartPolicy"].as<std::string>() == "Never");
  CHECK(job["spec"]["backoffLimit"].as<int>() == 0);
  CHECK(job["metadata"]["annotations"]["io.imgtool.tag"].as<std::string>() == c.tag);
  bool shm = false, probe_vol = false;
  for (auto v : pod["volumes"]) {
    if (v["emptyDir"] && v["emptyDir"]["medium"].as<std::string>() == "Memory") shm = true;
    if (v["configMap"])
      probe_vol = v["configMap"]["name"].as<std::string>() == cm["metadata"]["name"].as<std::string>();
  }
  CHECK(shm);
  CHECK(probe_vol);
  std::string cmd;
  for (auto w : ctr["command"]) cmd += w.as<std::string>() + " ";
  CHECK(cmd ==
        "python3 /imgtool-probe/probe.py --gpus-requested 1 --expect-variant gpu --expect-cuda 12.6 "
        "--nonce 0123456789ab --expect-shm 8589934592 --expect-user 1000:1000 ");
  CHECK(job["spec"]["ttlSecondsAfterFinished"].as<int>() == 86400);
  CHECK(job["metadata"]["annotations"]["io.imgtool.nonce"].as<std::string>() == "0123456789ab");
  // Tomorrow's run of the same digest: other Job names (a Job's pod template is immutable).
  CHECK(smoke_job_name(c.tag, fake_digest("b"), "ba9876543210") !=
        smoke_job_name(c.tag, fake_digest("b"), "0123456789ab"));
  CHECK(smoke_job_name(c.tag, fake_digest("c"), "0123456789ab") !=
        smoke_job_name(c.tag, fake_digest("b"), "0123456789ab"));
  std::string collect = read_file(d.path / "collect.sh");
  CHECK(collect.find("kubectl get pods --selector \"job-name=$j\" -o json") != std::string::npos);
  CHECK(collect.find("nonce=0123456789ab") != std::string::npos);
  // collect.sh against a stand-in kubectl: each Job's log, its pod, its node and the run's nonce.
  write_file_atomic(
      d.path / "bin" / "kubectl",
      "#!/bin/sh\n"
      "case \"$1 $2\" in\n"
      "  logs*) echo \"log of $2\" ;;\n"
      "  'get pods') case \"$*\" in *jsonpath*) printf gpu-node-1 ;; *) echo '{\"kind\": \"List\"}' ;; esac ;;\n"
      "  'get node') echo \"{\\\"node\\\": \\\"$3\\\"}\" ;;\n"
      "  *) exit 3 ;;\n"
      "esac\n",
      0755);
  auto sh = run({"sh", (d.path / "collect.sh").string()},
                {.env = {{"PATH", (d.path / "bin").string() + ":" + std::getenv("PATH")}}});
  INFO(sh.out << sh.err);
  CHECK(sh.exit_code == 0);
  fs::path res = d.path / "results";
  CHECK(read_file(res / (c.tag + ".json")) ==
        "log of job/" + smoke_job_name(c.tag, fake_digest("b"), "0123456789ab") + "\n");
  CHECK(read_file(res / (c.tag + ".pod")) == "{\"kind\": \"List\"}\n");
  CHECK(read_file(res / (c.tag + ".node")) == "{\"node\": \"gpu-node-1\"}\n");
  CHECK(read_file(res / (c.tag + ".nonce")) == "0123456789ab\n");
  CHECK(smoke_job_name(c.tag, fake_digest("b"), "0123456789ab").size() <= 63);
  CHECK(read_file(d.path / "collect.sh")
            .find("save " + smoke_job_name(c.tag, fake_digest("b"), "0123456789ab") + " " + c.tag) !=
        std::string::npos);
  // Isolation: run/'s least privilege, no service links, never hostIPC, and the deny-all policy selects the pod.
  CHECK_FALSE(pod["automountServiceAccountToken"].as<bool>());
  CHECK_FALSE(pod["enableServiceLinks"].as<bool>());
  CHECK_FALSE(pod["hostIPC"]);
  CHECK(pod["securityContext"]["seccompProfile"]["type"].as<std::string>() == "RuntimeDefault");
  CHECK(pod["securityContext"]["runAsNonRoot"].as<bool>());
  CHECK_FALSE(ctr["securityContext"]["allowPrivilegeEscalation"].as<bool>());
  CHECK(ctr["securityContext"]["capabilities"]["drop"][0].as<std::string>() == "ALL");
  YAML::Node np = YAML::LoadFile((d.path / "networkpolicy-smoke.yaml").string());
  CHECK(np["kind"].as<std::string>() == "NetworkPolicy");
  CHECK(np["spec"]["policyTypes"].size() == 2);
  CHECK_FALSE(np["spec"]["ingress"]);
  CHECK_FALSE(np["spec"]["egress"]);
  runconf::RunSpec host_ipc;
  host_ipc.ipc = "host";  // the detection profile's setting: a smoke Job never shares the node's IPC namespace
  auto ipc_files = smoke_jobs(
      cells, {.registry = "registry.example.com/ai", .profile = host_ipc, .probe_text = probe, .nonce = "0123456789ab"},
      kb);
  CHECK_FALSE(YAML::Load(ipc_files.at(2).text)["spec"]["template"]["spec"]["hostIPC"]);
  CHECK(np["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/part-of"].as<std::string>() ==
        job["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/part-of"].as<std::string>());
  if (have("kubernetes-validate"))
    check_valid({"kubernetes-validate", "--strict", "-k", runconf::kK8sVersion,
                 (d.path / "configmap-probe.yaml").string(), (d.path / "networkpolicy-smoke.yaml").string(), job_file});
}

TEST_CASE("k8s through plan: digests come from the report; a cell without one is refused, nothing written") {
  fx::ScratchDir d("emit-k8s-plan");
  auto kb = matrix::KnowledgeBase::load_default();
  auto plan = matrix::plan_matrix(kMatrix, kb);
  std::map<std::string, std::string> digests;
  for (auto& c : plan.kept)
    if (c.variant == "gpu") digests[c.tag] = fake_digest(std::string(1, "abcdef"[digests.size() % 6]));
  auto rep = publish_report(d.path / "report", digests);
  auto r = emit_to(
      Emit::k8s, d.path / "a",
      {.registry = "registry.example.com/ai", .from_report = rep, .resolve_digests = false, .nonce = "00000000aaaa"});
  CHECK(r.notes.size() == 5);  // the five cpu cells get no Job
  {
    auto job = YAML::LoadFile(
        (d.path / "a" /
         ("job-" + smoke_job_name(digests.begin()->first, digests.begin()->second, "00000000aaaa") + ".yaml"))
            .string());
    auto ctr = job["spec"]["template"]["spec"]["containers"][0];
    std::string cmd;
    for (auto w : ctr["command"]) cmd += w.as<std::string>() + " ";
    // The base run profile: its promises become the probe's expectations, as `imgtool smoke --profile` does.
    CHECK(cmd.find("--expect-memlock -1 --expect-stack 67108864 --expect-shm 8589934592 --expect-user 1000:1000") !=
          std::string::npos);
    CHECK(job["spec"]["template"]["metadata"]["annotations"]["imgtool.io/ulimits"]);
  }
  emit_to(
      Emit::k8s, d.path / "b",
      {.registry = "registry.example.com/ai", .from_report = rep, .resolve_digests = false, .nonce = "00000000aaaa"});
  std::vector<std::string> yamls;
  for (auto& e : fs::directory_iterator(d.path / "a")) {
    CHECK(read_file(e.path()) == read_file(d.path / "b" / e.path().filename()));
    if (e.path().extension() == ".yaml") yamls.push_back(e.path().string());
  }
  std::sort(yamls.begin(), yamls.end());
  CHECK(yamls.size() == digests.size() + 2);  // + the ConfigMap and the NetworkPolicy
  if (have("kubernetes-validate")) {
    std::vector<std::string> argv = {"kubernetes-validate", "--strict", "-k", runconf::kK8sVersion};
    argv.insert(argv.end(), yamls.begin(), yamls.end());
    check_valid(argv);
  }
  // One gpu cell missing from the report: refused, naming it; nothing written.
  std::string missing = digests.begin()->first;
  digests.erase(digests.begin());
  publish_report(d.path / "report", digests);
  try {
    emit_to(Emit::k8s, d.path / "c",
            {.registry = "registry.example.com/ai", .from_report = rep, .resolve_digests = false});
    FAIL("expected a refusal");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("cell '" + missing + "' has no digest") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(d.path / "c"));
  CHECK_THROWS_AS(emit_to(Emit::k8s, d.path / "d", {}), InputError);  // no --registry
  CHECK_FALSE(fs::exists(d.path / "d"));
  CHECK_THROWS_AS(parse_emit("jenkins"), InputError);
}
