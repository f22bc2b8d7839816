// `imgtool nightly collect RESULT.json… --from-report DIR --report OUT`: GPU
// smoke results that ran elsewhere (the Kubernetes Jobs `imgtool plan --emit k8s`
// writes; each Job's log, the probe's JSON, saved as <tag>.json) folded into a
// nightly report and the throughput records store.
//
// One judgement path: each document goes through smoke::judge_smoke (the
// probe's verdict, as `imgtool smoke` reads it) and smoke::record_and_judge_smoke
// (records_from_probe → record_and_judge: floors and history, the same store
// rules), with the cell's published digest as the image. The cell's smoke step
// is replaced by the result (status pass|fail, reasons, warnings, throughput with
// history, `source` naming the file); build, gate and publish stay as they were.
// A file without a probe document makes the cell's smoke an error naming the file.
//
// Hardware evidence (smoke/evidence.h): each collected document becomes the cell's evidence
// (source "collected: FILE"), and with `key` it is attested for the cell's published digest in its
// registry repository -- signed HERE, on the CI side, with the key that signed the nightly's
// images. The Jobs on the GPU nodes hold no key at all: a cluster node (shared, often someone
// else's) never sees signing material, and a second "smoke key" would have to be distributed to
// and trusted on every node, where a compromised node could sign anything. What this step signs is
// what it judged: the probe document as the Job printed it, for the digest the Job ran (the Job's
// image is that digest, `plan --emit k8s`).
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "image/transport.h"
#include "nightly/nightly_model.h"
#include "smoke/smoke_judge.h"

namespace imgtool::nightly {

struct CollectOptions {
  std::vector<std::filesystem::path> results;  // <tag>.json files
  std::filesystem::path from_report;           // nightly report folder the cells are in
  smoke::RecordOptions records;                // the records store (as imgtool smoke's)
  std::string key;                             // private key (a file, or env://VAR): attest the evidence
  std::string passphrase_env;
  image::TransportOptions transport;  // TLS/auth for the cells' registry, and the command's registry session
};

// The report of `from_report` with the results folded in. InputError (nothing
// recorded) when a file's tag is not in the report, a tag comes twice, or the
// report cannot be read.
NightlyReport collect_results(const CollectOptions& o);

// A judgement plus its series' last 30 values (same tag, GPU, driver, metric)
// for the report's chart; the nightly's own smoke and collect both use it.
ThroughputPoint judgement_with_history(const smoke::Judgement& j, const std::string& records_file);

}  // namespace imgtool::nightly
