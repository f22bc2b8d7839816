// Tag-only bases pinned before the cells are generated (issue 35: every base by digest). The
// builder has the engine the generator lacks: for each kept cell whose base the matrix names by tag
// only, the engine is asked once per base what that tag is now. Cell::base_id = its image ID
// (label io.imgtool.base-id), and Cell::base_from = what FROM names instead of the tag:
//   pulled (the engine records a registry digest for the base's repository): `name:tag@sha256:…`
//     (the registry's manifest, resolved once, here);
//   made here (no registry digest: scripts/make-base.sh, make-cuda-base.sh): `sha256:<id>`, which
//     the classic builder resolves locally (`name@<id>` would be pulled from a registry). BuildKit
//     reads `sha256:<id>` as docker.io/library/sha256 and pulls (moby/moby#39769, moby/buildkit#2204,
//     both open): under BuildKit FROM keeps the tag (base_id is still set), and the line says so;
//   absent, with a registry to ask (`registry`, the CLI's: registry_digest): `name:tag@sha256:…`, the
//     digest the registry gives the tag now, resolved once per base and printed; the build pulls
//     that digest, and base_id stays empty (the engine has no ID for it yet);
//   absent otherwise, or the registry does not answer: nothing (the build pulls the tag; the plan's
//     tag-only warning stays); likewise when the engine does not answer (the line says so; each
//     cell's build then fails alone, as before).
// The pin stays outside the inputs hash (dockerfiles/generate.cc hashes the cell without it), so an
// image built here is still up to date on an engine that lacks the base (a GPU host given the
// image); where the engine holds the base, the up-to-date check (build_driver.cc) and `imgtool
// reproduce` compare the image's io.imgtool.base-id with it: a base made again rebuilds its cells.
// A pin the matrix wrote (base_image@sha256:…, base_digest) is kept as is (and is in the hash).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "matrix/matrix.h"

namespace imgtool::builder {

// What a registry says a base's tag is now: the manifest digest of `image` (a FROM name). Throws
// Error when the registry does not answer or has no such tag.
using RegistryDigest = std::function<std::string(const std::string& image)>;

// The real one: image::Registry at the host the name means (image::parse_engine_name: Docker Hub
// for "nvidia/cuda:…"), anonymous or with the Docker config's credentials, TLS verified, one try of
// 15 s per request.
std::string registry_digest(const std::string& image);

// Pins plan.kept's tag-only bases; one line per base ("base NAME: image ID sha256:…"). A base the
// engine lacks is asked of `registry` when one is given.
std::vector<std::string> pin_bases(matrix::Plan& plan, engine::Engine& engine,
                                   const RegistryDigest& registry = nullptr);

// "nvidia/cuda:12.6.3-…" -> "nvidia/cuda"; "docker.io/library/debian:12" -> "debian" (as the engine
// writes RepoDigests).
std::string repository_of(const std::string& image);

}  // namespace imgtool::builder
