// The release gate: an image's claims (io.imgtool.* labels and its tag) against
// its contents, read from the layers. One call for every path to a release tag:
//   promote  — the registry image by digest, claims read against the NEW tag;
//   nightly  — the built image in the local engine, addressed by its image ID,
//              before anything is pushed.
// A contradicting image is refused with the rows that failed; it is never
// published or promoted.
//
//   GateResult g = release_gate({.ref = …, .source = &src, .tag = "3.2.0-cpu", .kb = &kb});
//   if (!g.passed()) … g.failed_lines() …
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "image/image.h"
#include "matrix/kb.h"
#include "sbom/inventory.h"
#include "verify/report_model.h"
#include "verify/static_checks.h"

namespace imgtool::verify {

struct GateInputs {
  std::string ref;                            // for messages (as the user or the nightly named it)
  image::ImageSource* source = nullptr;       // required: where the manifest, config and layers come from
  std::string tag;                            // the tag the image will carry (its claims are read against it)
  const matrix::KnowledgeBase* kb = nullptr;  // required: driver floors
  bool inventory = false;                     // also gather the SBOM inventory in the same scan
};

struct GateResult {
  Report report;  // the claims rows (no signature, no smoke)
  // The image's SBOM inventory from the gate's own scan (GateInputs::inventory): the nightly attests
  // it for the pushed digest without reading the image again.
  std::optional<sbom::Inventory> inventory;
  // A built image's layers are scanned from the docker save stream as the source compresses them
  // (as_saved); only layers the source already had (its layer cache) are read again.
  LayerReads layer_reads;
  bool passed() const { return report.ok(); }
  std::vector<CheckResult> failed() const;
  // One line per failed row: "claims.paddle: expected 3.1.0, found 3.2.0".
  std::vector<std::string> failed_lines() const;
};

// Never throws for a contradicting or unreadable image (a failed row says so);
// InputError for missing inputs.
GateResult release_gate(const GateInputs& in);

}  // namespace imgtool::verify
