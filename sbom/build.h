// The SBOM of one image: its layer inventory (inventory.h) plus what its
// config says (labels: the matrix cell io.imgtool.*, inputs hash, KB version,
// base image name and digest) as an SPDX 2.3 document (spdx.h).
//
// Determinism: identical inputs give identical bytes. Packages are sorted
// (kind, name, version, location); SPDXIDs come from names; `created` is
// SbomOptions::created if given (a passed clock), else the label
// org.opencontainers.image.created, else the config's `created` (the build's
// time, part of the image), to the second; the namespace is derived from the
// image name and manifest digest.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "image/config.h"
#include "image/image.h"
#include "sbom/inventory.h"
#include "sbom/spdx.h"

namespace imgtool::sbom {

struct ImageInfo {
  std::string name;                           // "REGISTRY/REPO" or the docker-daemon name
  std::string digest;                         // manifest digest "sha256:…" (docker-daemon: the image ID)
  std::map<std::string, std::string> labels;  // config.Labels
  std::string created;                        // config.created
  std::string architecture;                   // config.architecture
};

// Labels, created and architecture of an image's config.
ImageInfo image_info(const std::string& name, const std::string& digest, const image::ImageConfig& config);

struct SbomOptions {
  std::string created;  // "" = from the image (see above); else RFC 3339, e.g. "2026-11-23T20:00:00Z"
};

inline constexpr const char* kImageId = "SPDXRef-Image";
inline constexpr const char* kBaseImageId = "SPDXRef-BaseImage";

Document build_sbom(const Inventory& inv, const ImageInfo& info, const SbomOptions& opt = {});

// "2026-11-23T20:10:11.123456789Z" / "+00:00" -> "2026-11-23T20:10:11Z";
// InputError (naming `what`) for anything that is not such a UTC time.
std::string spdx_time(const std::string& rfc3339, const std::string& what);

}  // namespace imgtool::sbom
