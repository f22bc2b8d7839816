// The nightly's report model, typed: one NightlyCell per cell with its four
// steps {build, smoke, gate, publish}, each with an enum status, and one
// to/from JSON (nightly.json; field names below). Renderers and the merge read
// this model; no status is compared as a string.
//
//   {kind, matrix, registry, gpus, builder, shards:["i/n"], started, seconds, docker_builds, ok, previous, release,
//    kb:{version, released, age_days, check: not checked|up to date|stale|incomplete|error, index, stale:[line…],
//        errors:[line…]},
//    cells:[{tag, image, image_id, built_image_id (what docker build made, when --reproducible normalized it
//            into image_id), inputs_hash, kb_version, base, variant, cuda, python, paddle, cudnn, cuda_archs, ok,
//            layers:[{digest, size}] (the published manifest's, compressed), packages:{"<purl type>/<name>": version}
//            (from the SBOM), changes:["what changed since the previous run", …], promote (staged cells),
//            build:{status: built|up-to-date|FAILED, attempts, seconds, log, error},
//            reproduce:{outcome: reproduced|differs|not rebuilt, detail, rebuilt_digest, seconds} (sampled cells),
//            smoke:{status: pass|fail|cached|skipped|error, seconds, reasons, warnings, throughput, error, source},
//            gate:{status: pass|fail|skipped|error, seconds, failed:[row…], error},
//            publish:{status: published|unchanged|failed|skipped, seconds, ref, digest, signature_tag, error,
//            dated_tag}}]}
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "builder/build_driver.h"
#include "core/check_row.h"
#include "image/image.h"
#include "smoke/evidence.h"

namespace imgtool::nightly {

enum class SmokeStatus { pass, fail, cached, skipped, error };
enum class GateStatus { pass, fail, skipped, error, cached };  // cached: passed before for this image ID + tag + KB
enum class PublishStatus { published, unchanged, failed, skipped };
// The KB against the package indexes (kb/check.h): not read (the default: the nightly stays
// offline), nothing stale, stale releases, pages not read, or the check could not run.
enum class KbCheckStatus { not_checked, up_to_date, stale, incomplete, error };

std::string to_string(SmokeStatus s);
std::string to_string(GateStatus s);
std::string to_string(PublishStatus s);
std::string to_string(KbCheckStatus s);

struct BuildStep {
  builder::CellStatus status = builder::CellStatus::failed;
  int attempts = 0;
  double seconds = 0;
  std::string log, error;
  bool ok() const { return status != builder::CellStatus::failed; }
};

// One judged throughput metric of a cell (smoke::Judgement) with its series' history, typed; its
// JSON is flat: {metric, value, unit, status: ok|warn|fail, gpu, driver, floor, median,
// history_runs, notes, history: [{time, value}…]} (a report's older nested {"record": {…}} is read too).
struct ThroughputPoint {
  std::string metric, unit, gpu, driver;
  double value = 0;
  CheckStatus status = CheckStatus::kPass;
  std::optional<double> floor, median;
  int history_runs = 0;
  std::vector<std::string> notes;
  struct Earlier {
    int64_t time = 0;
    double value = 0;
  };
  std::vector<Earlier> history;  // the series' stored runs, as the records store returns them
};

struct SmokeStep {
  SmokeStatus status = SmokeStatus::skipped;
  double seconds = 0;
  std::vector<std::string> reasons, warnings;
  std::vector<ThroughputPoint> throughput;
  std::string error;
  std::string source;  // "" = run by this nightly; "collected: FILE" = `nightly collect` (a Kubernetes Job's log)
  std::optional<smoke::SmokeEvidence> evidence;  // how it was smoked (smoke/evidence.h); none = nothing attested
  bool ok() const { return status == SmokeStatus::pass || status == SmokeStatus::cached; }
  // "hardware, 1× NVIDIA H100 …" / "test-double …: the GPU part never ran on hardware"; "" = none.
  std::string evidence_summary() const;
  bool hardware() const;  // the evidence says a real GPU ran it and it passed
};

struct GateStep {
  GateStatus status = GateStatus::skipped;
  double seconds = 0;
  std::vector<std::string> failed;  // the failed rows, one line each
  std::string error;
  bool ok() const { return status == GateStatus::pass || status == GateStatus::cached; }
};

struct PublishStep {
  PublishStatus status = PublishStatus::skipped;
  double seconds = 0;
  std::string ref, digest, signature_tag, error;
  std::string dated_tag;  // "<tag>-nightly-<YYYYMMDD>" pointed at digest ("" = not written)
  bool ok() const { return status == PublishStatus::published || status == PublishStatus::unchanged; }
};

// nightly --reproduce N: the cell rebuilt with --no-cache and compared with what the registry holds
// (reproduce/reproduce.h). Empty outcome: not sampled tonight.
struct ReproduceStep {
  std::string outcome;  // "reproduced" | "differs" | "not rebuilt" | ""
  std::string detail;   // how it was reproduced, why it was not rebuilt, or where it differs
  std::string rebuilt_digest;
  double seconds = 0;
  bool ok() const { return outcome.empty() || outcome == "reproduced"; }
};

// One layer of a published image: its blob digest and compressed size.
struct LayerSize {
  std::string digest;
  long long size = 0;
};
// A manifest's layers (image::Manifest::layers(), release::PublishResult::layers) as the report
// keeps them.
std::vector<LayerSize> sizes_of(const std::vector<image::Descriptor>& layers);

struct NightlyCell {
  std::string tag, image, image_id, inputs_hash, kb_version, base, variant, cuda, python, paddle;
  std::string built_image_id;     // --reproducible: the docker build's image, normalized into image_id
  std::string cudnn, cuda_archs;  // the cell's claims a collected document is bound against (smoke/binding.h)
  BuildStep build;
  SmokeStep smoke;
  GateStep gate;
  PublishStep publish;
  ReproduceStep reproduce;
  std::vector<LayerSize> layers;                // of the published image; empty when not published
  std::map<std::string, std::string> packages;  // "<purl type>/<name>" -> version, from the image's SBOM
  std::vector<std::string> changes;             // since the previous run (nightly/report_changes.h)
  std::string promote;                          // staged (--stage-repository): the command that releases it
  // Published only after build, smoke and gate passed; a smoke collected later (`nightly collect`,
  // a GPU smoke on a cluster after a --no-gpu-host nightly published) that failed fails the cell too.
  bool ok() const { return publish.ok() && smoke.ok() && reproduce.ok(); }
  // The first problem: "<step>: <error or first reason>", "" when none.
  std::string problem() const;
};

// The knowledge base the cells were planned with: its age, and (nightly --kb-check) what the
// package indexes have that it lacks.
struct KbState {
  std::string version, released;  // KnowledgeBase::version(), kb.yaml `released`
  long age_days = 0;              // the nightly's day - released
  KbCheckStatus check = KbCheckStatus::not_checked;
  std::string index;                // the mirror it was checked against; "" = PyPI and Paddle's own
  std::vector<std::string> stale;   // kb::StaleRelease::line(), one per release
  std::vector<std::string> errors;  // pages not read; or why the check could not run
};

struct NightlyReport {
  std::string matrix, registry, gpus, builder, started;
  std::string previous;  // `started` of the run this one was compared with; "" = none
  std::string release;   // --stage-repository: the release HOST/NS the staged cells are promoted into; "" = none
  std::vector<std::string> shards;
  KbState kb;
  double seconds = 0;
  int docker_builds = 0;
  std::vector<NightlyCell> cells;
  bool ok() const;
  // One line per published gpu cell whose smoke never ran on a GPU ("<tag>: <evidence summary>"):
  // its tag carries no hardware evidence (the summary and the report say so).
  std::vector<std::string> without_hardware_evidence() const;
};

void to_json(nlohmann::json& j, const ThroughputPoint& t);
void from_json(const nlohmann::json& j, ThroughputPoint& t);
void to_json(nlohmann::json& j, const SmokeStep& s);
void from_json(const nlohmann::json& j, SmokeStep& s);
void to_json(nlohmann::json& j, const NightlyCell& c);
void from_json(const nlohmann::json& j, NightlyCell& c);
void to_json(nlohmann::json& j, const KbState& k);
void from_json(const nlohmann::json& j, KbState& k);
void to_json(nlohmann::json& j, const NightlyReport& r);
// InputError naming the field when the document is not a nightly report.
void from_json(const nlohmann::json& j, NightlyReport& r);

}  // namespace imgtool::nightly
