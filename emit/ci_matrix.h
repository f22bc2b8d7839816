// CI matrices for a sharded nightly (`imgtool plan M --emit github|gitlab`):
//
//   github   a GitHub Actions workflow: job `nightly` with strategy.matrix.include
//            = one entry {shard: "i/n", index: i, cells: "<tags>"} per runner, each
//            running `imgtool nightly M --shard i/n` and uploading its report
//            folder; job `merge` (needs: nightly, if: always()) downloads them and
//            runs `imgtool nightly merge … --report report`.
//   gitlab   a .gitlab-ci.yml: job `nightly` with parallel:matrix (SHARD, SHARD_INDEX,
//            CELLS per entry) and job `nightly-merge` in a later stage.
//
// With --no-gpu-host (runners without a GPU) the pipeline is the release path with hardware
// evidence: the shards publish into the staging registry (`nightly --stage-repository
// $IMGTOOL_STAGING`, release registry $IMGTOOL_REGISTRY); job `gpu-smoke` (a runner with kubectl
// access to a cluster with GPU nodes) renders the smoke Jobs from the merged report (`plan --emit
// k8s --from-report`), runs them, saves their logs (collect.sh) and folds them in with `nightly
// collect --key`, which attests each result as the digest's hardware evidence; job `promote` runs
// `nightly promote`, which releases every staged cell -- a gpu cell only with that evidence.
//
// The cells each entry names are nightly::shard_of()'s, the function `nightly
// --shard` selects with, so a new cell never moves another between runners.
// Shards that would hold no cell get no entry. Output is deterministic (no
// clock, no host path): identical inputs give identical bytes. The signing key
// comes from a CI secret (IMGTOOL_SIGNING_KEY, the PEM text) that imgtool reads
// itself (`--key env://IMGTOOL_SIGNING_KEY`, sign::load_signing_key): no key
// file is written on the runner, and the variable is gone from the environment
// of every program the nightly starts. The registry comes from --registry, else
// the CI variable IMGTOOL_REGISTRY.
#pragma once
#include <string>
#include <vector>

#include "nightly/shard.h"

namespace imgtool::emit {

// The CI secret holding the signing key's PEM text.
inline constexpr const char* kSigningKeyVariable = "IMGTOOL_SIGNING_KEY";

struct ShardEntry {
  nightly::Shard shard;
  std::vector<std::string> tags;  // sorted
};

// The non-empty shards of `tags` over `count` runners, in shard order.
std::vector<ShardEntry> shard_table(std::vector<std::string> tags, int count);

struct CiOptions {
  std::string matrix;                // the matrix file as the CI checkout names it
  int shards = 4;                    // runners n (shards that get no cell get no entry)
  std::string registry;              // HOST[:PORT]/NS; "" = the CI variable IMGTOOL_REGISTRY
  std::vector<std::string> runs_on;  // GitHub runs-on labels / GitLab runner tags
  bool no_gpu_host = false;          // pass --no-gpu-host to nightly (GPU smoke runs elsewhere, e.g. --emit k8s)
};

// Workflow / pipeline text for the kept cells' tags. InputError when there is
// no cell or shards < 1.
std::string emit_github(const std::vector<std::string>& tags, const CiOptions& o);
std::string emit_gitlab(const std::vector<std::string>& tags, const CiOptions& o);

}  // namespace imgtool::emit
