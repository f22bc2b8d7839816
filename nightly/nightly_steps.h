// The nightly's steps after the build, behind one small interface so the
// pipeline's order and gating can be tested without an engine or registry.
//
//   smoke(cell)    runs the smoke probe in the local image (verify/), stores
//                  and judges its throughput records; never throws for a
//                  failing image (the verdict says so).
//   gate(cell)     the release gate (verify/release_gate.h, the same call as
//                  `promote`): the built image's claims against its contents,
//                  read from the local engine by image ID; never throws for a
//                  contradicting image (its GateResult lists the failed rows).
//   publish(cell, evidence)  push by digest → sign → SBOM → the smoke's evidence → move tag
//                  (release::publish): the tag is only ever set on a signed, attested digest.
//                  Throws imgtool::Error when any of it fails (the tag stays put).
//
// The pipeline calls publish() ONLY for a cell whose smoke AND gate passed.
#pragma once
#include <string>
#include <vector>

#include "builder/build_driver.h"
#include "image/reference.h"
#include "nightly/nightly_model.h"
#include "release/publish.h"
#include "sbom/inventory.h"
#include "smoke/evidence.h"
#include "smoke/smoke_judge.h"
#include "verify/release_gate.h"

namespace imgtool::nightly {

// What smoke() returns: the smoke library's own judged result and how it was smoked, typed; the
// pipeline maps it to the report's SmokeStep once (nightly.cc).
struct SmokeOutcome {
  smoke::JudgedSmoke judged;  // the run (verdict, reasons, binding contradictions) and its throughput judgement
  std::optional<smoke::SmokeEvidence> evidence;  // what publish() and attest() sign (smoke/evidence.h)
  std::vector<ThroughputPoint> throughput;       // judged.throughput, each with its series' history (the records store)
};

// --registry "HOST[:PORT][/NS…]": the namespace the cells are published into (image::parse_namespace;
// InputError naming --registry when it is not one).
image::Reference parse_registry(const std::string& text);
// Where cell `c` is published in `target`: HOST/NS/REPO:TAG.
image::Reference cell_reference(const image::Reference& target, const matrix::Cell& c);

class NightlySteps {
 public:
  virtual ~NightlySteps() = default;
  virtual SmokeOutcome smoke(const builder::GeneratedCell& g, const builder::CellBuild& b) = 0;
  // verify::release_gate's result, its SBOM inventory included (gathered by the same scan).
  virtual verify::GateResult gate(const builder::GeneratedCell& g, const builder::CellBuild& b) = 0;
  // `evidence`: the smoke step's (SmokeStep::evidence, a cached one's too); null = none attested.
  // `inventory`: the gate's (GateResult::inventory) when the gate ran tonight; null = a cached gate.
  // release::publish's result; the cell's reference is cell_reference(target, g.cell).
  virtual release::PublishResult publish(const builder::GeneratedCell& g, const builder::CellBuild& b,
                                         const smoke::SmokeEvidence* evidence, const sbom::Inventory* inventory) = 0;
  // The digest the cell's tag names in the registry now ("" when none): one
  // HEAD request, so an unchanged image is not pushed again.
  virtual std::string registry_digest(const builder::GeneratedCell& g) = 0;
  // The layers of the cell's manifest `digest` in the registry (sizes for the report of an unchanged
  // cell, which is not pushed again): one GET of the manifest.
  virtual std::vector<LayerSize> layers_of(const builder::GeneratedCell& g, const std::string& digest) = 0;
  // Points `tag` of the cell's repository at `digest` (already published: signed, attested), unless
  // it does already: the dated nightly tag (nightly_tag.h) that `imgtool prune --keep N` ages out.
  virtual void add_tag(const builder::GeneratedCell& g, const std::string& digest, const std::string& tag) = 0;
  // Attests tonight's smoke `evidence` (a predicate) for the cell's already published `digest`, whose
  // config must be the smoked image b.image_id (release::attest_evidence): an unchanged cell's
  // registry then says what tonight's smoke says, not what an earlier night's did.
  virtual void attest(const builder::GeneratedCell& g, const builder::CellBuild& b, const std::string& digest,
                      const smoke::SmokeEvidence& evidence) = 0;
};

}  // namespace imgtool::nightly
