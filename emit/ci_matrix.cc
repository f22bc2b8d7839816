#include "emit/ci_matrix.h"

#include <algorithm>

#include "core/error.h"
#include "emit/yaml_out.h"
#include "run/render.h"

namespace imgtool::emit {
namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

void check(const std::vector<std::string>& tags, const CiOptions& o) {
  if (tags.empty()) throw InputError("plan --emit: expected at least one kept cell in " + o.matrix + ", found none");
  if (o.shards < 1) throw InputError("--shards: expected a number of runners >= 1, found " + std::to_string(o.shards));
}

// The shell lines of one shard's job; $SHARD and $REPORT come from the job's environment.
// The key never touches the runner's disk: imgtool reads the PEM text from IMGTOOL_SIGNING_KEY
// itself (--key env://…) and removes it from its environment before it starts any program. A
// key file deleted after the nightly was left behind by every failed run (GitHub and GitLab run
// scripts with `set -eo pipefail`) and every cancel, on runners later jobs share.
std::vector<std::string> nightly_lines(const CiOptions& o, const std::string& registry_expr) {
  std::string cmd = "imgtool nightly " + runconf::shell_quote(o.matrix) + " --registry \"" + registry_expr +
                    "\" --key env://" + std::string(kSigningKeyVariable) + " --shard \"$SHARD\" --report \"$REPORT\"";
  if (o.no_gpu_host) cmd += " --no-gpu-host --stage-repository \"$IMGTOOL_STAGING\"";
  return {cmd};
}

// The gpu-smoke job's lines: the smoke Jobs of the merged report's staged digests, on the cluster's
// GPU nodes; their logs (with each pod's facts from the API server) collected and attested as each
// digest's hardware evidence (signed here, on the CI side: the GPU nodes hold no key). Two parts:
// the cluster part runs without the signing key in its environment -- kubectl, the exec credential
// plugins it starts (cloud token helpers) and collect.sh never see it -- and only the one imgtool
// line that signs gets it (GitHub: its own step; GitLab, whose variables are the job's: the cluster
// part in a subshell that unsets it first).
std::vector<std::string> gpu_smoke_cluster_lines(const CiOptions& o) {
  return {"imgtool plan " + runconf::shell_quote(o.matrix) +
              " --emit k8s --registry \"$IMGTOOL_STAGING\" --from-report report --out k8s",
          "kubectl apply -f k8s/",
          "for f in k8s/job-*.yaml; do kubectl wait --for=condition=complete --timeout=3600s -f \"$f\" || true; done",
          "sh k8s/collect.sh || true"};
}

std::string gpu_smoke_attest_line() {
  return "imgtool nightly collect k8s/results/*.json --from-report report --report report --key env://" +
         std::string(kSigningKeyVariable);
}

// GitLab: one script, the cluster part in a subshell without the key.
std::vector<std::string> gpu_smoke_lines(const CiOptions& o) {
  std::vector<std::string> lines = {"(", "unset " + std::string(kSigningKeyVariable)};
  for (auto& l : gpu_smoke_cluster_lines(o)) lines.push_back(l);
  lines.push_back(")");
  lines.push_back(gpu_smoke_attest_line());
  return lines;
}

// The promote job's line: every staged cell into the release registry; gpu cells need the evidence.
std::string promote_line() {
  return "imgtool nightly promote --from-report report --sign-key env://" + std::string(kSigningKeyVariable);
}

std::vector<std::string> header(const CiOptions& o, const std::string& emit) {
  std::string cmd = "imgtool plan " + o.matrix + " --emit " + emit + " --shards " + std::to_string(o.shards);
  if (!o.registry.empty()) cmd += " --registry " + o.registry;
  if (!o.runs_on.empty()) cmd += " --runs-on " + join(o.runs_on, ",");
  if (o.no_gpu_host) cmd += " --no-gpu-host";
  std::vector<std::string> h = {
      "Written by `" + cmd + "`: re-run it after editing the matrix, do not edit by hand.",
      "Each runner runs `imgtool nightly --shard i/n`; its cells are listed beside it. A cell's shard is a",
      "rendezvous hash of its tag, so adding a cell never moves another one to a different runner.",
      "Secrets: IMGTOOL_SIGNING_KEY (the private key's PEM text; a plain variable, not a file: imgtool reads it",
      "with --key env://IMGTOOL_SIGNING_KEY and removes it from its environment, so no file and no child process "
      "holds it)" +
          std::string(o.registry.empty() ? "; variable IMGTOOL_REGISTRY (HOST[:PORT]/NAMESPACE)." : "."),
      o.no_gpu_host
          ? "No GPU on these runners: the shards publish to IMGTOOL_STAGING (HOST[:PORT]/NAMESPACE); gpu-smoke "
            "runs the "
            "smoke Jobs on the cluster's GPU nodes and attests their results; promote releases every cell, "
            "a GPU one only with that hardware evidence."
          : "The shards smoke on their own GPUs and publish straight to the registry."};
  if (emit == "gitlab")
    h.push_back(
        "GitLab gives a CI/CD variable to every line of every job it reaches: make IMGTOOL_SIGNING_KEY a PROTECTED "
        "variable (protected branches only) and scope it (environment scope) to the jobs that sign -- nightly, "
        "gpu-smoke, promote; gpu-smoke runs its cluster part (kubectl, its credential plugins, collect.sh) in a "
        "subshell that unsets it first.");
  return h;
}

YAML::Node step_uses(const std::string& uses, const YAML::Node& with, const std::string& cond = "") {
  YAML::Node s;
  s["uses"] = uses;
  if (!cond.empty()) s["if"] = cond;
  s["with"] = with;
  return s;
}

YAML::Node report_download(const std::string& artifact) {
  YAML::Node down;
  down["name"] = artifact;
  down["path"] = "report";
  return step_uses("actions/download-artifact@v4", down);
}

// A run step; `signs`: the one step whose imgtool line signs gets the key in its environment.
YAML::Node run_step(const std::string& name, const std::vector<std::string>& lines, const CiOptions& o,
                    bool signs = true) {
  YAML::Node run;
  run["name"] = name;
  if (signs) run["env"]["IMGTOOL_SIGNING_KEY"] = "${{ secrets.IMGTOOL_SIGNING_KEY }}";
  run["env"]["IMGTOOL_STAGING"] = "${{ vars.IMGTOOL_STAGING }}";
  if (o.registry.empty()) run["env"]["IMGTOOL_REGISTRY"] = "${{ vars.IMGTOOL_REGISTRY }}";
  run["shell"] = "bash";
  run["run"] = join(lines, "\n");
  return run;
}

// --no-gpu-host: gpu-smoke (the Kubernetes Jobs, collect --key) and promote after merge.
void add_github_release(YAML::Node& root, const CiOptions& o, const YAML::Node& runs_on) {
  YAML::Node smoke;
  smoke["needs"] = "merge";
  smoke["runs-on"] = seq({"self-hosted", "linux", "kubectl"});
  YAML::Node checkout;
  checkout["uses"] = "actions/checkout@v4";
  smoke["steps"].push_back(checkout);
  smoke["steps"].push_back(report_download("nightly-report"));
  smoke["steps"].push_back(
      run_step("GPU smoke Jobs on the cluster (no signing key here)", gpu_smoke_cluster_lines(o), o, false));
  smoke["steps"].push_back(
      run_step("imgtool nightly collect: results bound to their pods, attested", {gpu_smoke_attest_line()}, o));
  YAML::Node up;
  up["name"] = "nightly-report-smoked";
  up["path"] = "report";
  smoke["steps"].push_back(step_uses("actions/upload-artifact@v4", up, "always()"));
  root["jobs"]["gpu-smoke"] = smoke;
  YAML::Node promote;
  promote["needs"] = "gpu-smoke";
  // A GPU cell whose smoke failed fails gpu-smoke (collect exits 1); the other cells are promoted all
  // the same (promote refuses the ones without passing evidence): a failing cell never stops the rest.
  promote["if"] = "!cancelled()";
  promote["runs-on"] = runs_on;
  promote["steps"].push_back(report_download("nightly-report-smoked"));
  promote["steps"].push_back(
      run_step("imgtool nightly promote (gpu cells need hardware evidence)", {promote_line()}, o));
  root["jobs"]["promote"] = promote;
}

}  // namespace

std::vector<ShardEntry> shard_table(std::vector<std::string> tags, int count) {
  std::sort(tags.begin(), tags.end());
  std::vector<ShardEntry> table;
  for (int i = 1; i <= count; ++i) table.push_back({{i, count}, {}});
  for (auto& t : tags) table[nightly::shard_of(t, count) - 1].tags.push_back(t);
  std::erase_if(table, [](const ShardEntry& e) { return e.tags.empty(); });
  return table;
}

std::string emit_github(const std::vector<std::string>& tags, const CiOptions& o) {
  check(tags, o);
  int n = o.shards;  // not capped by the cell count: n is part of every cell's shard, so it must not follow the matrix
  YAML::Node runs_on = o.runs_on.empty() ? seq({"self-hosted", "linux"}) : seq(o.runs_on);
  YAML::Node root;
  root["name"] = "imgtool nightly";
  YAML::Node cron;
  cron["cron"] = "0 2 * * *";
  root["on"]["schedule"].push_back(cron);
  root["on"]["workflow_dispatch"] = YAML::Node(YAML::NodeType::Map);
  root["permissions"]["contents"] = "read";

  YAML::Node job;
  job["name"] = "nightly ${{ matrix.shard }}";
  job["runs-on"] = runs_on;
  job["strategy"]["fail-fast"] = false;
  for (auto& e : shard_table(tags, n)) {
    YAML::Node entry;
    entry["shard"] = str(e.shard.text());
    entry["index"] = e.shard.index;
    entry["cells"] = str(join(e.tags, " "));
    job["strategy"]["matrix"]["include"].push_back(entry);
  }
  YAML::Node checkout;
  checkout["uses"] = "actions/checkout@v4";
  job["steps"].push_back(checkout);
  YAML::Node run;
  run["name"] = "imgtool nightly --shard ${{ matrix.shard }} (${{ matrix.cells }})";
  run["env"]["SHARD"] = "${{ matrix.shard }}";
  run["env"]["REPORT"] = "report-${{ matrix.index }}";
  run["env"]["IMGTOOL_SIGNING_KEY"] = "${{ secrets.IMGTOOL_SIGNING_KEY }}";
  if (o.registry.empty()) run["env"]["IMGTOOL_REGISTRY"] = "${{ vars.IMGTOOL_REGISTRY }}";
  // The shards publish to staging: without the variable in this step's environment its line would
  // pass --stage-repository "" (the scale-out test found every shard publishing straight to release).
  if (o.no_gpu_host) run["env"]["IMGTOOL_STAGING"] = "${{ vars.IMGTOOL_STAGING }}";
  run["shell"] = "bash";
  run["run"] = join(nightly_lines(o, o.registry.empty() ? "$IMGTOOL_REGISTRY" : o.registry), "\n");
  job["steps"].push_back(run);
  YAML::Node up;
  up["name"] = "nightly-shard-${{ matrix.index }}";
  up["path"] = "report-${{ matrix.index }}";
  job["steps"].push_back(step_uses("actions/upload-artifact@v4", up, "always()"));
  root["jobs"]["nightly"] = job;

  YAML::Node merge;
  merge["needs"] = "nightly";
  merge["if"] = "always()";
  merge["runs-on"] = runs_on;
  YAML::Node down;
  down["pattern"] = "nightly-shard-*";
  down["path"] = "shards";
  merge["steps"].push_back(step_uses("actions/download-artifact@v4", down));
  YAML::Node m;
  m["name"] = "imgtool nightly merge";
  m["shell"] = "bash";
  m["run"] = "imgtool nightly merge shards/* --report report";
  merge["steps"].push_back(m);
  YAML::Node final_up;
  final_up["name"] = "nightly-report";
  final_up["path"] = "report";
  merge["steps"].push_back(step_uses("actions/upload-artifact@v4", final_up, "always()"));
  root["jobs"]["merge"] = merge;
  if (o.no_gpu_host) add_github_release(root, o, runs_on);
  return to_yaml(root, header(o, "github"));
}

std::string emit_gitlab(const std::vector<std::string>& tags, const CiOptions& o) {
  check(tags, o);
  int n = o.shards;  // not capped by the cell count: n is part of every cell's shard, so it must not follow the matrix
  YAML::Node root;
  root["stages"] = o.no_gpu_host ? seq({"nightly", "merge", "gpu-smoke", "promote"}) : seq({"nightly", "merge"});
  YAML::Node job;
  job["stage"] = "nightly";
  if (!o.runs_on.empty()) job["tags"] = seq(o.runs_on);
  for (auto& e : shard_table(tags, n)) {
    YAML::Node entry;
    entry["SHARD"] = str(e.shard.text());
    entry["SHARD_INDEX"] = str(std::to_string(e.shard.index));
    entry["CELLS"] = str(join(e.tags, " "));
    job["parallel"]["matrix"].push_back(entry);
  }
  auto lines = nightly_lines(o, o.registry.empty() ? "$IMGTOOL_REGISTRY" : o.registry);
  lines.insert(lines.begin(), "REPORT=\"reports/shard-$SHARD_INDEX\"");
  job["script"] = seq({join(lines, "\n")});
  job["artifacts"]["when"] = "always";
  job["artifacts"]["paths"] = seq({"reports/"});
  root["nightly"] = job;
  YAML::Node merge;
  merge["stage"] = "merge";
  merge["when"] = "always";
  merge["needs"] = seq({"nightly"});
  if (!o.runs_on.empty()) merge["tags"] = seq(o.runs_on);
  merge["script"] = seq({"imgtool nightly merge reports/shard-* --report report"});
  merge["artifacts"]["when"] = "always";
  merge["artifacts"]["paths"] = seq({"report/"});
  root["nightly-merge"] = merge;
  if (o.no_gpu_host) {
    YAML::Node smoke;
    smoke["stage"] = "gpu-smoke";
    smoke["needs"] = seq({"nightly-merge"});
    smoke["tags"] = seq({"kubectl"});
    smoke["script"] = seq({join(gpu_smoke_lines(o), "\n")});
    smoke["artifacts"]["when"] = "always";
    smoke["artifacts"]["paths"] = seq({"report/", "k8s/results/"});
    root["gpu-smoke"] = smoke;
    YAML::Node promote;
    promote["stage"] = "promote";
    promote["needs"] = seq({"gpu-smoke"});
    promote["when"] = "always";  // as GitHub's !cancelled(): a failed GPU smoke holds back only its own cell
    if (!o.runs_on.empty()) promote["tags"] = seq(o.runs_on);
    promote["script"] = seq({promote_line()});
    root["promote"] = promote;
  }
  return to_yaml(root, header(o, "gitlab"));
}

}  // namespace imgtool::emit
