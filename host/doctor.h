// `imgtool doctor`: the host's facts (detect.h) judged row by row — each row
// ok/warn/fail with what was found and, when not ok, the fix. A host without
// GPUs is not an error: the rows say so and what it means (cpu images only).
// The CUDA a driver can serve and the CUDA a GPU's architecture needs come
// from the knowledge base (cuda.yaml, arch.yaml, gpus.yaml). The NVIDIA container toolkit row
// names its version ("not installed" when neither nvidia-ctk nor nvidia-container-cli answers).
// The `docker run --gpus all` row runs a LOCAL probe image by its ID inside the engine's fence
// (detect.h); a probe image the host lacks is "not tried", never pulled.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/check_row.h"
#include "host/detect.h"
#include "matrix/kb.h"

namespace imgtool::host {

// The one check-row model (core/check_row.h): doctor fills id ("doctor.nvidia-driver"), title
// ("NVIDIA driver"), status (pass/warn/fail), found (with where from) and fix; it says "ok" for pass.
using Status = CheckStatus;
using DoctorRow = CheckRow;
const char* to_string(Status s);  // doctor's words: "ok", "warn", "fail"

struct DoctorReport {
  HostFacts facts;
  std::vector<DoctorRow> rows;
  bool failed() const;
};

DoctorReport diagnose(const HostFacts& f, const matrix::KnowledgeBase& kb);

// What an image claims that this host must serve (its io.imgtool.* labels).
struct ImageNeeds {
  std::string ref;
  std::string variant, cuda, min_driver;
  std::string cuda_archs;  // io.imgtool.cuda-archs
  std::string platform;    // "linux/amd64" (its config); "" = not known
};
// Rows for `imgtool doctor --image REF`: can this host run the image? Its GPU code on every
// visible GPU (no kernel image for a GPU outside io.imgtool.cuda-archs: fail, with the tag to use
// instead), and the driver against the image's floor.
std::vector<DoctorRow> image_rows(const HostFacts& f, const ImageNeeds& img, const matrix::KnowledgeBase& kb);

nlohmann::json to_json(const DoctorReport& r);
std::string render_table(const DoctorReport& r);

// The newest CUDA major.minor in the KB this driver serves (minor-version
// compatibility floor), or "" when none.
std::string newest_cuda_for_driver(const std::string& driver, const matrix::KnowledgeBase& kb);

}  // namespace imgtool::host
