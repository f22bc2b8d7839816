// `imgtool plan M --emit github|gitlab|bake|k8s --out DIR`: the files that run a
// matrix on engines a team already has. One entry point for the CLI; every file
// is computed first and then written atomically (core/fs), so bad input
// (InputError, one line) leaves nothing behind. Identical inputs give
// byte-identical files.
//
//   github  DIR/imgtool-nightly.yml             (ci_matrix.h)
//   gitlab  DIR/imgtool-nightly.gitlab-ci.yml   (ci_matrix.h; `include: local:` it)
//   bake    DIR/bake-<stage key>.json, DIR/bake.sh, DIR/cells/<tag>/ (bake.h;
//           M may also be a folder `imgtool generate` wrote)
//   k8s     DIR/configmap-probe.yaml, DIR/job-<name>.yaml, DIR/collect.sh (k8s_jobs.h)
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "image/transport.h"

namespace imgtool::emit {

enum class Emit { github, gitlab, bake, k8s };

// InputError "--emit: expected github, gitlab, bake or k8s, found 'X'".
Emit parse_emit(const std::string& s);

struct PlanEmitOptions {
  std::string input;  // matrix file (bake: or a generated folder)
  Emit emit = Emit::github;
  std::filesystem::path out;          // output folder
  std::string kb_dir;                 // "" = the default knowledge base
  int shards = 4;                     // github/gitlab: runners
  std::vector<std::string> runs_on;   // github runs-on labels / gitlab runner tags
  bool no_gpu_host = false;           // github/gitlab: nightly --no-gpu-host
  std::string registry;               // bake: optional; k8s: required
  std::string gpu_model;              // k8s: GPU feature discovery product
  std::vector<std::string> profiles;  // k8s: run profiles the Jobs run with (default: base)
  std::vector<std::string> sets;      // k8s: --set key=value on top
  std::filesystem::path from_report;  // k8s: digests from this nightly report
  bool resolve_digests = true;        // k8s: ask the registry for digests the report lacks
  std::string nonce;                  // k8s: the run's nonce (SmokeJobOptions::nonce); "" = a random one
  image::TransportOptions transport;  // k8s: the registry's TLS/http options and the command's registry session
};

struct PlanEmitResult {
  std::vector<std::filesystem::path> written;
  std::vector<std::string> notes;  // cells left out and why
};

PlanEmitResult emit_plan(const PlanEmitOptions& o);

}  // namespace imgtool::emit
