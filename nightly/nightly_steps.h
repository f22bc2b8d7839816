// The nightly's steps after the build, behind one small interface so the
// pipeline's order and gating can be tested without an engine or registry.
//
//   smoke(cell)    runs the smoke probe in the local image (verify/), stores
//                  and judges its throughput records; never throws for a
//                  failing image (the verdict says so).
//   gate(cell)     the release gate (verify/release_gate.h, the same call as
//                  `promote`): the built image's claims against its contents,
//                  read from the local engine by image ID; never throws for a
//                  contradicting image (the outcome lists the failed rows).
//   publish(cell, evidence)  push by digest → sign → SBOM → the smoke's evidence → move tag
//                  (release::publish): the tag is only ever set on a signed, attested digest.
//                  Throws imgtool::Error when any of it fails (the tag stays put).
//
// The pipeline calls publish() ONLY for a cell whose smoke AND gate passed.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "builder/build_driver.h"
#include "image/reference.h"
#include "nightly/nightly_model.h"
#include "sbom/inventory.h"

namespace imgtool::nightly {

struct SmokeOutcome {
  bool passed = false;
  std::vector<std::string> reasons;  // why it failed (the smoke's diagnosis)
  std::vector<std::string> warnings;
  nlohmann::json detail;                    // the smoke result as JSON (probe document, verdict…)
  std::vector<ThroughputPoint> throughput;  // each metric judged, with its series' history
  nlohmann::json evidence;                  // smoke::to_predicate: how it was smoked (smoke/evidence.h)
};

struct GateOutcome {
  bool passed = false;
  std::vector<std::string> failed;  // one line per failed row ("claims.paddle: expected …, found …")
  // What the gate's one read of the layers found (verify::GateResult's), handed to publish() for the
  // SBOM so the image is read once; null when the gate gathered none (then publish reads the layers).
  std::shared_ptr<const sbom::Inventory> inventory;
};

struct PublishOutcome {
  std::string ref;                              // HOST/NS/REPO:TAG
  std::string digest;                           // manifest digest the tag now names
  std::string signature_tag;                    // sha256-<hex>.sig
  bool unchanged = false;                       // the tag already named this signed digest (nothing pushed)
  std::vector<LayerSize> layers;                // the pushed manifest's layers
  std::map<std::string, std::string> packages;  // from the SBOM attested with it ("<purl type>/<name>" -> version)
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
  virtual GateOutcome gate(const builder::GeneratedCell& g, const builder::CellBuild& b) = 0;
  // `evidence`: the smoke step's (SmokeStep::evidence, a cached one's too); null = none attested.
  // `inventory`: the gate's (GateOutcome::inventory) when the gate ran tonight; null = a cached gate.
  virtual PublishOutcome publish(const builder::GeneratedCell& g, const builder::CellBuild& b,
                                 const nlohmann::json& evidence, const sbom::Inventory* inventory) = 0;
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
                      const nlohmann::json& evidence) = 0;
};

}  // namespace imgtool::nightly
