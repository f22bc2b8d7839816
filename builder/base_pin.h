// Tag-only bases pinned before the cells are generated (issue 35: every base by digest). The
// builder has the engine the generator lacks: for each kept cell whose base the matrix names by tag
// only, the engine is asked once per base what that tag is now —
//   pulled (the engine records a registry digest for the base's repository): base_digest = that
//     digest, so FROM reads `name:tag@sha256:…` (the registry's manifest, resolved once, here);
//   made here (no registry digest: scripts/make-base.sh, make-cuda-base.sh): base_id = the image
//     ID, so FROM reads `sha256:<id>`, which the classic builder resolves locally (`name@<id>` would
//     be pulled from a registry). BuildKit reads `sha256:<id>` as docker.io/library/sha256 and pulls
//     (moby/moby#39769, moby/buildkit#2204, both open): under BuildKit such a base stays by tag, and
//     the line says so;
//   absent: left by tag (the build pulls it; the plan's tag-only warning stays); likewise when the
//     engine does not answer (the line says so; each cell's build then fails alone, as before).
// The pin is in the Dockerfile, so the inputs hash covers it: a base made again is another input
// (the cell is built again, `imgtool reproduce` says the inputs changed), and the cell's
// tag-only warning goes. A pin the matrix wrote (base_image@sha256:…, base_digest) is kept as is.
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
