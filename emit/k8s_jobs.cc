#include "emit/k8s_jobs.h"

#include <openssl/rand.h>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/hash.h"
#include "emit/yaml_out.h"
#include "matrix/labels.h"
#include "nightly/nightly_steps.h"
#include "run/render.h"

namespace imgtool::emit {
namespace {

constexpr const char* kProbeMount = "/imgtool-probe";
// Every smoke pod and nothing else: the deny-all NetworkPolicy selects this label.
constexpr const char* kPartOf = "imgtool-smoke";

std::string configmap_name(const std::string& probe) { return "imgtool-probe-" + sha256_hex(probe).substr(0, 10); }

std::string configmap(const SmokeJobOptions& o) {
  YAML::Node m;
  m["apiVersion"] = "v1";
  m["kind"] = "ConfigMap";
  m["metadata"]["name"] = configmap_name(o.probe_text);
  m["metadata"]["labels"]["app.kubernetes.io/part-of"] = kPartOf;
  m["immutable"] = true;
  m["data"]["probe.py"] = o.probe_text;
  return to_yaml(m,
                 {"Written by `imgtool plan --emit k8s`: " + o.probe_file + ", mounted read-only by every smoke Job."});
}

// The smoke's --network none for a cluster: a NetworkPolicy with no rule, Ingress and Egress, for
// every smoke pod (enforced where the cluster's network plugin enforces NetworkPolicy).
std::string network_policy() {
  YAML::Node p;
  p["apiVersion"] = "networking.k8s.io/v1";
  p["kind"] = "NetworkPolicy";
  p["metadata"]["name"] = "imgtool-smoke-no-network";
  p["metadata"]["labels"]["app.kubernetes.io/part-of"] = kPartOf;
  p["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/part-of"] = kPartOf;
  p["spec"]["policyTypes"].push_back("Ingress");
  p["spec"]["policyTypes"].push_back("Egress");
  return to_yaml(p,
                 {"Written by `imgtool plan --emit k8s`: no traffic in or out of a smoke pod (the probe needs none),",
                  "as `imgtool smoke` runs it with --network none."});
}

runconf::RunSpec probe_spec(const CellImage& c, const SmokeJobOptions& o) {
  runconf::RunSpec s = o.profile;
  s.name = smoke_job_name(c.cell.tag, c.digest, o.nonce);
  s.ipc.clear();  // never hostIPC for an image under test: `imgtool smoke` leaves --ipc host out too
  // One GPU per smoke Job whatever the profile says (base.yaml's `auto` included: a gpu cell on Kubernetes).
  if (!s.gpu_devices.empty() || s.gpus.empty() || s.gpus == "0" || s.gpus == "all" || s.gpus == "auto") s.gpus = "1";
  s.gpu_devices.clear();  // Kubernetes schedules nvidia.com/gpu by count
  if (!o.gpu_model.empty()) s.gpu_model = o.gpu_model;
  if (!s.shm_bytes) s.shm_bytes = runconf::parse_size(o.shm_size).value_or(0);
  if (s.user.empty()) s.user = "1000:1000";
  s.code = s.data = s.output = {};
  s.health_command.clear();
  s.env["HOME"] = "/tmp";
  s.env["PYTHONDONTWRITEBYTECODE"] = "1";
  s.backoff_limit = 0;
  s.command = {"python3", std::string(kProbeMount) + "/probe.py", "--gpus-requested", s.gpus, "--expect-variant",
               "gpu"};
  if (!c.cell.cuda.empty()) s.command.insert(s.command.end(), {"--expect-cuda", c.cell.cuda});
  if (!c.cell.cuda_archs.empty()) s.command.insert(s.command.end(), {"--expect-archs", c.cell.cuda_archs});
  s.command.insert(s.command.end(), {"--nonce", o.nonce});
  for (auto& a : runconf::probe_expectations(s)) s.command.push_back(a);
  return s;
}

// run/'s Job plus what a smoke Job needs beyond a run profile.
std::string job(const CellImage& c, const SmokeJobOptions& o, const matrix::KnowledgeBase& kb) {
  if (c.cell.variant != "gpu")
    throw InputError("plan --emit k8s: cell '" + c.cell.tag + "' is a " + c.cell.variant +
                     " image; expected gpu cells only");
  if (!is_sha256_digest(c.digest))
    throw InputError("plan --emit k8s: cell '" + c.cell.tag +
                     "' has no digest (expected sha256:<64 hex> from --from-report or " +
                     "the registry; a Job never runs an image by tag)");
  std::string image =
      nightly::cell_reference(nightly::parse_registry(o.registry), c.cell).with_digest(c.digest).within_transport();
  YAML::Node j = YAML::Load(runconf::render_k8s(probe_spec(c, o), image, "job", kb));
  j["metadata"]["labels"]["app.kubernetes.io/part-of"] = kPartOf;
  j["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/part-of"] = kPartOf;
  j["metadata"]["annotations"][labels::kTag] = runconf::str_node(c.cell.tag);
  j["metadata"]["annotations"]["io.imgtool.digest"] = c.digest;
  j["metadata"]["annotations"]["io.imgtool.nonce"] = o.nonce;
  j["spec"]["activeDeadlineSeconds"] = 3600;
  // Gone a day after it finished: collect runs right after the Jobs, the next night's run has its own names.
  j["spec"]["ttlSecondsAfterFinished"] = 86400;
  YAML::Node pod = j["spec"]["template"]["spec"];
  pod["restartPolicy"] = "Never";     // a failed probe's pod (and its log) stays for collect
  pod["enableServiceLinks"] = false;  // no environment variables naming the namespace's services
  pod["nodeSelector"]["nvidia.com/gpu.present"] = runconf::str_node("true");
  YAML::Node mount;
  mount["name"] = "probe";
  mount["mountPath"] = kProbeMount;
  mount["readOnly"] = true;
  pod["containers"][0]["volumeMounts"].push_back(mount);
  YAML::Node vol;
  vol["name"] = "probe";
  vol["configMap"]["name"] = configmap_name(o.probe_text);
  pod["volumes"].push_back(vol);
  return to_yaml(j);
}

std::string collect_script(const std::vector<CellImage>& cells, const std::string& nonce) {
  std::string s =
      "#!/bin/sh\n"
      "# Written by `imgtool plan --emit k8s`. After the Jobs finished (kubectl apply -f configmap-probe.yaml\n"
      "# -f networkpolicy-smoke.yaml -f job-….yaml), save for each Job, from the API server:\n"
      "#   results/<tag>.json   its log (the probe's document between its sentinel lines; the rest is log)\n"
      "#   results/<tag>.pod    its pod (kubectl get pods --selector job-name=JOB -o json): image ID, node, GPUs\n"
      "#   results/<tag>.node   that pod's node (kubectl get node NODE -o json): its nvidia.com/gpu.product\n"
      "#   results/<tag>.nonce  this run's nonce, which the probe echoes\n"
      "# then: imgtool nightly collect results/*.json --from-report NIGHTLY_REPORT --report OUT\n"
      "# Extra arguments go to kubectl (e.g. -n NAMESPACE). Exit 1 names the Jobs without a log.\n"
      "# No secret reaches this script or kubectl: only the `imgtool nightly collect --key` line signs.\n"
      "set -u\n"
      "cd \"$(dirname \"$0\")\" || exit 2\n"
      "mkdir -p results\n"
      "missing=\"\"\n"
      "nonce=" +
      nonce +
      "\n"
      "save() {\n"
      "  j=$1; t=$2; shift 2\n"
      "  kubectl logs \"job/$j\" \"$@\" > \"results/$t.json.tmp\" &&\n"
      "    kubectl get pods --selector \"job-name=$j\" -o json \"$@\" > \"results/$t.pod.tmp\" &&\n"
      "    node=$(kubectl get pods --selector \"job-name=$j\" -o \"jsonpath={.items[0].spec.nodeName}\" \"$@\") &&\n"
      "    kubectl get node \"$node\" -o json \"$@\" > \"results/$t.node.tmp\" &&\n"
      "    printf '%s\\n' \"$nonce\" > \"results/$t.nonce\" &&\n"
      "    mv \"results/$t.pod.tmp\" \"results/$t.pod\" && mv \"results/$t.node.tmp\" \"results/$t.node\" &&\n"
      "    mv \"results/$t.json.tmp\" \"results/$t.json\" ||\n"
      "    { rm -f \"results/$t.json.tmp\" \"results/$t.pod.tmp\" \"results/$t.node.tmp\"; missing=\"$missing $j\"; }\n"
      "}\n";
  for (auto& c : cells) s += "save " + smoke_job_name(c.cell.tag, c.digest, nonce) + " " + c.cell.tag + " \"$@\"\n";
  s += "if [ -n \"$missing\" ]; then echo \"collect: no log for:$missing\" >&2; exit 1; fi\n";
  return s;
}

}  // namespace

std::string smoke_job_name(const std::string& tag, const std::string& digest, const std::string& nonce) {
  std::string n;
  for (char ch : tag) {
    char l = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
    n += isalnum(static_cast<unsigned char>(l)) ? l : '-';
  }
  // 6 + 24 + 1 + 8 + 1 + 8 + 1 + 12 = 61 <= 63 (a DNS label): the tag's hash keeps two long tags apart.
  std::string hex = digest.size() > 7 ? digest.substr(7, 8) : "nodigest";
  return "smoke-" + n.substr(0, 24) + "-" + sha256_hex(tag).substr(0, 8) + "-" + hex + "-" + nonce.substr(0, 12);
}

std::string new_nonce() {
  unsigned char b[6];
  if (RAND_bytes(b, sizeof b) != 1) throw Error("plan --emit k8s: no random bytes for the run's nonce");
  std::string hex;
  for (unsigned char c : b) hex += "0123456789abcdef"[c >> 4], hex += "0123456789abcdef"[c & 15];
  return hex;
}

std::vector<EmittedFile> smoke_jobs(const std::vector<CellImage>& cells, const SmokeJobOptions& o,
                                    const matrix::KnowledgeBase& kb) {
  if (o.registry.empty())
    throw InputError(
        "plan --emit k8s: expected --registry HOST[:PORT]/NAMESPACE (the Jobs pull by digest from it), found none");
  if (cells.empty()) throw InputError("plan --emit k8s: expected at least one gpu cell in the plan, found none");
  if (o.nonce.size() < 8 || o.nonce.size() > 12 || o.nonce.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw InputError("plan --emit k8s: expected a nonce of 8-12 lowercase hex digits, found '" + o.nonce + "'");
  std::vector<EmittedFile> out{{"configmap-probe.yaml", configmap(o)}, {"networkpolicy-smoke.yaml", network_policy()}};
  for (auto& c : cells)
    out.push_back({"job-" + smoke_job_name(c.cell.tag, c.digest, o.nonce) + ".yaml", job(c, o, kb)});
  out.push_back({"collect.sh", collect_script(cells, o.nonce), 0755});
  return out;
}

}  // namespace imgtool::emit
