// Which image verify's static checks read for a registry manifest: the
// manifest itself, or for an index (OCI index / Docker manifest list) its
// linux/amd64 entry. Used by promote's contents gate, which opens that digest
// with image::open_source("docker://HOST/REPO@sha256:…").
#pragma once
#include <string>

#include "image/image.h"

namespace imgtool::verify {

// Picks the linux/amd64 manifest digest from an index; Error if none.
std::string pick_platform(const image::Manifest& index, const std::string& where);

// m's digest, or for an index the digest of its linux/amd64 manifest (pick_platform).
std::string image_digest(const image::Manifest& m, const std::string& where);

}  // namespace imgtool::verify
