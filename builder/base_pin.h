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
//   absent: nothing (the build pulls it; the plan's tag-only warning stays); likewise when the
//     engine does not answer (the line says so; each cell's build then fails alone, as before).
// The pin stays outside the inputs hash (dockerfiles/generate.cc hashes the cell without it), so an
// image built here is still up to date on an engine that lacks the base (a GPU host given the
// image); where the engine holds the base, the up-to-date check (build_driver.cc) and `imgtool
// reproduce` compare the image's io.imgtool.base-id with it: a base made again rebuilds its cells.
// A pin the matrix wrote (base_image@sha256:…, base_digest) is kept as is (and is in the hash).
#pragma once
#include <string>
#include <vector>

#include "engine/engine.h"
#include "matrix/matrix.h"

namespace imgtool::builder {

// Pins plan.kept's tag-only bases; one line per base pinned ("base NAME: image ID sha256:…").
std::vector<std::string> pin_bases(matrix::Plan& plan, engine::Engine& engine);

// "nvidia/cuda:12.6.3-…" -> "nvidia/cuda"; "docker.io/library/debian:12" -> "debian" (as the engine
// writes RepoDigests).
std::string repository_of(const std::string& image);

}  // namespace imgtool::builder
