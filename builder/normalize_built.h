// A built image made reproducible in place (issue 35): the engine's image of a cell, normalized
// (image/normalize.h: entries in path order, mtimes clamped to the cell's SOURCE_DATE_EPOCH, build
// records dropped, the config's times set, a fixed gzip) and loaded back under the same name, so
// what is smoked, gated, pushed and signed is the normalized image itself, and a rebuild on another
// day gives the same image ID and, pushed, the same manifest digest.
//
//   NormalizedBuild n = normalize_built(docker, "paddle-local:3.3.1", epoch, rules, work_parent);
//
// Each normalized layer is gzip'd into the layer cache (image/normalized_cache.h), where the publish
// of the normalized image finds it by its diff_id (nothing saved or compressed again), and where the
// next build of a cell on the same base finds the base's layers already normalized (not read again).
// The engine is handed the gzip'd layers (docker load inflates them).
// The normalized copy passes through a private folder under `work_parent` (removed after); the
// image the build made is left without a name (the caller removes it). Throws Error (the engine,
// the disk) or InputError (an image that cannot be read as an image).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "image/normalize.h"

namespace imgtool::builder {

struct NormalizedBuild {
  std::string image_id;  // the normalized image's ID (= its config digest), now under the name
  size_t layers = 0, mtimes_clamped = 0, pyc_rewritten = 0, dropped = 0;
  size_t cached = 0;  // layers found normalized in the layer cache (not read again)
};

NormalizedBuild normalize_built(engine::Engine& docker, const std::string& image, int64_t epoch,
                                const std::vector<image::NormalizeRule>& rules,
                                const std::filesystem::path& work_parent);

}  // namespace imgtool::builder
