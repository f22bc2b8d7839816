// The image label contract (ARCHITECTURE.md, "Image labels"): every io.imgtool.*
// name in one place, for dockerfiles/ (labels.tsv is checked against this list),
// builder/ (the labels `docker build` adds) and verify/ (the claims it reads).
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

namespace imgtool::labels {

inline constexpr std::string_view kPrefix = "io.imgtool.";

// Claims checked against the image's contents (claims = these minus the prefix).
inline constexpr const char* kPaddle = "io.imgtool.paddle";
inline constexpr const char* kPython = "io.imgtool.python";
inline constexpr const char* kVariant = "io.imgtool.variant";
inline constexpr const char* kFlavor = "io.imgtool.flavor";
inline constexpr const char* kCuda = "io.imgtool.cuda";
inline constexpr const char* kCudnn = "io.imgtool.cudnn";
inline constexpr const char* kTensorrt = "io.imgtool.tensorrt";
inline constexpr const char* kMinDriver = "io.imgtool.min-driver";
// The GPU code compiled into Paddle's libraries ("sm_61,…,sm_86[,compute_86]"): which GPUs the
// image can run on (select/doctor/run-config refuse others; verify reads the libraries).
inline constexpr const char* kCudaArchs = "io.imgtool.cuda-archs";
// Bookkeeping.
inline constexpr const char* kTag = "io.imgtool.tag";
inline constexpr const char* kInputsHash = "io.imgtool.inputs-hash";
inline constexpr const char* kKbVersion = "io.imgtool.kb-version";
inline constexpr const char* kStageOf = "io.imgtool.stage-of";  // on shared-stage images only
// The shared-stage group key (builder/stage_plan.h) a cell image was built
// against, and a stage image was built as: `imgtool prune` keeps a stage
// image while a tagged cell image names its key.
inline constexpr const char* kStageKey = "io.imgtool.stage-key";
// The cell's SOURCE_DATE_EPOCH (seconds; the KB's released day): what its build's clock said to
// tools that honour it, and what a reproducible copy clamps mtimes to (image/normalize.h).
inline constexpr const char* kSourceDateEpoch = "io.imgtool.source-date-epoch";
// The image ID of the base the engine held when the builder generated the cell (builder/base_pin.h):
// what the up-to-date check and `imgtool reproduce` compare with the engine's base. Absent when the
// engine lacked the base or the matrix pinned it itself (org.opencontainers.image.base.digest).
inline constexpr const char* kBaseId = "io.imgtool.base-id";
// The manifest digest FROM named (the matrix's base_digest or the builder's registry pin), as the
// OCI annotation spells it: an image built on another digest is not up to date (build_driver.cc).
inline constexpr const char* kBaseDigest = "org.opencontainers.image.base.digest";
// Its value as seconds: 0 unless it is a number of 1 to 12 digits (an image's label is its own word).
inline int64_t source_date_epoch(std::string_view value) {
  int64_t v = 0;
  if (value.empty() || value.size() > 12) return 0;
  for (char c : value) {
    if (c < '0' || c > '9') return 0;
    v = v * 10 + (c - '0');
  }
  return v;
}
// On the first stage of a generated cell, never on the cell's image (not in kAll): a mark fresh for
// each docker build (--build-arg IMGTOOL_BUILD_STAGE, builder/build_driver.cc). The classic builder
// leaves a finished stage behind as an untagged image of GBs (the wheels and the venv); the builder
// finds it by this mark and removes it once the cell's image is made (unless --keep-stages), and
// `imgtool prune` removes any that is left untagged.
inline constexpr const char* kBuildStage = "io.imgtool.build-stage";
inline constexpr const char* kBuildStageArg = "IMGTOOL_BUILD_STAGE";
// On a CUDA base image made by scripts/make-cuda-base.sh (not a template's label: not in kAll):
// the CUDA it ships; verify checks such a base's library set instead of Paddle claims.
inline constexpr const char* kBaseCuda = "io.imgtool.base.cuda";

inline constexpr std::array<const char*, 9> kClaims = {kPaddle, kPython,   kVariant,   kFlavor,   kCuda,
                                                       kCudnn,  kTensorrt, kMinDriver, kCudaArchs};
inline constexpr std::array<const char*, 16> kAll = {
    kPaddle,    kPython, kVariant,    kFlavor,    kCuda,    kCudnn,    kTensorrt,        kMinDriver,
    kCudaArchs, kTag,    kInputsHash, kKbVersion, kStageOf, kStageKey, kSourceDateEpoch, kBaseId};

// "io.imgtool.paddle" -> "paddle".
constexpr std::string_view field(std::string_view label) { return label.substr(kPrefix.size()); }

}  // namespace imgtool::labels
