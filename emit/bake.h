// `docker buildx bake` files for teams with BuildKit builders
// (`imgtool plan M --emit bake [--registry R] --out DIR`):
//
//   DIR/bake-<stage key>.json   one file per shared-stage group (cells whose generated
//                               Dockerfiles share their first stage, builder/stage_plan.h):
//                               group "default" + one target per cell {context (relative to
//                               DIR), dockerfile, tags, labels, platforms, cache-from/cache-to}
//   DIR/bake.sh                 runs `docker buildx bake -f FILE TARGET` once per target,
//                               group by group: bake cancels every target of an invocation
//                               when one fails, so one target per invocation lets the others
//                               finish; the script exits 1 naming the failed targets.
//
// Labels are the ones `imgtool build` adds (inputs hash, tag, kb version); the
// Dockerfile carries the claims. With a registry the tag is a CANDIDATE,
// `<tag>-in<12 hex of the inputs hash>`, never the release tag: a release tag
// only moves onto a signed digest (`imgtool promote`, the nightly). The group's
// registry cache `REPO:buildcache-<stage key>` (mode=max, so the shared stage is in it)
// is read and written by every target of the group. Without a registry the
// tags are the local names `imgtool build` uses and there is no registry cache.
// Deterministic: identical cells give identical bytes (keys sorted, no clock).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "builder/generated_cell.h"

namespace imgtool::emit {

struct BakeOptions {
  std::filesystem::path out_dir;  // where the files go; contexts are written relative to it
  std::string registry;           // HOST[:PORT]/NS, or "" (local names, no registry cache)
};

struct BakeFile {
  std::string name;                  // "bake-<stage key>.json"
  std::vector<std::string> targets;  // bake target names (tags made [A-Za-z0-9_-])
  std::string json;                  // file text
};

// Bake target name for a tag: every character outside [A-Za-z0-9_-] becomes '_'.
std::string bake_target(const std::string& tag);

// One file per shared-stage group of the generated cells (cells with a
// generate_error are left out: they have no context). InputError when two tags
// map to one target name or no cell has a context.
std::vector<BakeFile> bake_files(const std::vector<builder::GeneratedCell>& cells, const BakeOptions& o);

// bake.sh for those files (see above).
std::string bake_script(const std::vector<BakeFile>& files);

}  // namespace imgtool::emit
