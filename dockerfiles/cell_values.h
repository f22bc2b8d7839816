// The values a template sees for one cell: every scalar field of the Cell,
// the cell's overrides, and a few derived values. This is the whole
// vocabulary of a template; dockerfiles/README.md lists it for editors.
//
//   fields      repository tag variant flavor paddle python os cuda cudnn trt
//               min_driver min_driver_full base_image base_digest base_id
//               pip_requirement pip_index_url template_name
//   derived     base_ref            base_image@base_digest, else Cell::base_from (the
//                                   builder's pin: NAME@sha256:… or sha256:<id>), else base_image
//               base_ref_digest     the manifest digest FROM names (base_digest, else a registry
//                                   pin's), "" for a tag or an image ID
//               gpu / cpu           "1" or "" (for {{#gpu}} sections)
//               cuda_mm             CUDA major.minor ("12.6")
//               nvidia_require_cuda NVIDIA_REQUIRE_CUDA value (see nvidia_require_cuda())
//               wheelhouse          "wheels" (the context folder) when the cell builds
//                                   offline, else ""; the host path never appears
//               kb_version          knowledge-base version
//               labels              the LABEL instruction from labels.tsv
//               inputs_hash_label   set by the generator (generate.h)
//   defaults    user=paddle uid=1000 runtime_packages=libgomp1 trt_pip_requirement=""
//               trt_pip_index_url=https://pypi.org/simple (overrides may change them)
// Precedence: defaults < overrides < fields/derived. Overrides that name a
// field are ignored here: the matrix has already applied them to the field.
//
// Every value is checked to be safe inside a Dockerfile line (no quotes,
// '$', '\', backquote, ';', '&', '|', '<', '>', control characters); a
// violation is an InputError naming the cell and the field.
#pragma once
#include <map>
#include <string>

#include "dockerfiles/template.h"
#include "matrix/cell.h"

namespace imgtool::dockerfiles {

// Validates the cell (variant, tag, digest, pinned pip requirement, https
// index) and returns its values, without labels/inputs_hash_label.
// `kb_released` (YYYY-MM-DD, "" = none) gives source_date_epoch: that day at 00:00 UTC, in seconds.
Values cell_values(const matrix::Cell& cell, const std::string& kb_version, const std::string& kb_released = "");

// "cuda>=12.6 driver>=525.60.13": the toolkit's CUDA version, OR (space =
// "or" for nvidia-container-toolkit) a driver at least the minor-version-
// compatibility floor the image claims as io.imgtool.min-driver. Just
// "cuda>=M.m" when the cell names no floor.
std::string nvidia_require_cuda(const matrix::Cell& cell);

// The manifest digest the cell's FROM names: the matrix's base_digest, else the builder's registry
// pin (Cell::base_from "NAME@sha256:…"); "" for a tag or an image ID. Label
// org.opencontainers.image.base.digest, which the up-to-date check compares (build_driver.cc).
std::string base_ref_digest(const matrix::Cell& cell);

// Renders labels.tsv (KEY<TAB>VALUE lines, placeholders allowed) into one
// LABEL instruction; labels whose value renders empty are omitted.
// `set` (when given) receives each label rendered, KEY -> VALUE.
std::string render_labels(const SourceFile& table, const Values& values,
                          std::map<std::string, std::string>* set = nullptr);

// The last line of the image's one LABEL instruction: the inputs hash and the cell's group key
// (cell_file.h: group_key, derived from what is hashed); labels_before_hash() ends the labels
// table's instruction with the continuation that leads to it (a LABEL of its own would be one
// more build step: a container created and committed). The hash is taken over the Dockerfile
// WITHOUT this line and that continuation (it cannot contain itself), so a reader recomputes it
// by deleting them (strip_inputs_hash_label).
std::string inputs_hash_label(const std::string& inputs_hash, const std::string& stage_key);
std::string labels_before_hash(const std::string& labels);
std::string strip_inputs_hash_label(const std::string& dockerfile);

// The index used when a cell has neither a wheelhouse nor an index URL.
inline constexpr const char* kDefaultIndexUrl = "https://pypi.org/simple";

}  // namespace imgtool::dockerfiles
