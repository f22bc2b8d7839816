// Platform selection from an index (OCI image index / Docker manifest list):
// imgtool checks, promotes and runs linux/amd64 images. Used by `verify` and
// `promote` alike, so a multi-platform tag is narrowed the same way everywhere.
#pragma once
#include <memory>
#include <string>

#include "image/image.h"
#include "image/reference.h"
#include "image/transport.h"

namespace imgtool::image {

struct Platform {
  std::string os = "linux";
  std::string architecture = "amd64";
  std::string text() const { return os + "/" + architecture; }
};

bool is_index(const Manifest& m);

// The digest of `p`'s manifest in an index (the first entry whose platform matches); Error
// naming `where` when there is none, or when that entry's digest is not sha256:<64 lowercase
// hex> (it is fetched by next: a path like "../x" would address something else).
std::string pick_platform(const Manifest& index, const std::string& where, const Platform& p = {});

// m's digest, or for an index the digest of its `p` manifest (pick_platform).
std::string platform_digest(const Manifest& m, const std::string& where, const Platform& p = {});

// A source for one platform's image: a docker:// reference is resolved once
// and reopened by digest — the index's `p` manifest, or the manifest itself.
// Other transports are opened as they are. `index_digest`, when given, is set to
// the digest of the index the reference named ("" when it named one manifest).
std::unique_ptr<ImageSource> open_platform_source(const Reference& r, const TransportOptions& o, const Platform& p = {},
                                                  std::string* index_digest = nullptr);

}  // namespace imgtool::image
