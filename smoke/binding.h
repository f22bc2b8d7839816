// Is a probe document about THIS image? Before any path attests a document (the nightly's smoke,
// `smoke --attest`, `nightly collect`), it is held against what imgtool knows of the image it is
// attested for -- its labels (the cell's claims), its image ID and creation time, the run's nonce --
// and every contradiction refuses the attestation, one line naming both values:
//   identity  the image's /etc/imgtool/identity.json (written by the generator) as the probe read
//             it: its tag and claims against the labels; a gpu image without one is refused
//   variant   a GPU Paddle build in a cpu image's document, a CPU one in a gpu image's
//   paddle    Paddle's version; a document with Paddle skipped is about no image's Paddle
//   python    the Python the probe's Paddle ran on, major.minor
//   cuda      Paddle's CUDA build and the loaded cudart, major.minor
//   cudnn     Paddle's cuDNN, major
//   archs     every device's compute capability served by the image's io.imgtool.cuda-archs
//   time      the probe started after the image was created and not after now (5 minutes' skew)
//   nonce     the per-run nonce the Job was given (Kubernetes), echoed by the probe
// A field imgtool does not know (an unlabelled claim) is not compared; a field the document lacks
// where the claim is known is a contradiction (the probe always reports these).
#pragma once
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "matrix/label_claims.h"

namespace imgtool::smoke {

struct BindingFacts {
  matrix::LabelClaims claims;  // the image's labels, as imgtool read them (engine or registry)
  std::string image_id;        // config digest the document is attested for; required
  std::time_t created = 0;     // the image's creation time; 0: unknown (the lower bound is not checked)
  std::string nonce;           // the run's nonce; "" when the run had none
  bool require_identity = true;
};

// One line per contradiction; empty when the document is about this image.
std::vector<std::string> binding_contradictions(const nlohmann::json& probe, const BindingFacts& f, std::time_t now);

// "2026-11-27T09:01:06Z" -> seconds since the epoch; 0 when it is not that form.
std::time_t parse_utc(const std::string& iso);

}  // namespace imgtool::smoke
