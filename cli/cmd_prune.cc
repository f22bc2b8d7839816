// imgtool prune [docker://HOST/REPO…] --keep N [--no-engine] [--dry-run] [--json]:
// what nightlies leave behind — on this host's Docker engine, imgtool's
// unneeded shared-stage images and dangling cell images (builder/prune.h);
// in each named repository, the dated nightly tags beyond the newest N per
// cell with their manifest, .sig and .att (nightly/registry_prune.h); with --caches, imgtool's own
// layer cache (cache_dir()/layers: compressed layers kept so an unchanged image is not compressed
// twice; bounded by IMGTOOL_LAYER_CACHE_MAX_GB as it is used).
#include <chrono>
#include <iostream>
#include <memory>

#include "builder/prune.h"
#include "cli/sign_common.h"
#include "cli/subcommand.h"
#include "core/fs.h"
#include "engine/engine.h"
#include "image/compress.h"
#include "image/layer_cache.h"
#include "nightly/registry_prune.h"

namespace imgtool::cli {
namespace {

struct PruneFlags {
  std::vector<std::string> repos;
  int keep = 0;
  bool no_engine = false, dry_run = false, json = false, caches = false;
  RegistryFlags registry;
};

// docker://HOST/REPO, no tag or digest: prune works on a whole repository.
image::Reference repository_ref(const std::string& text) {
  auto refuse = [&] {
    return InputError("prune: expected a repository docker://HOST/REPO (no tag or digest), found '" + text + "'");
  };
  image::Reference r = image::parse_reference(text);
  if (r.transport != image::Transport::docker || !r.is_repository()) throw refuse();
  return r;
}

// --caches: every compressed layer of the layer cache, whatever its age.
std::vector<builder::PruneItem> prune_caches(bool dry_run) {
  std::vector<builder::PruneItem> out;
  for (auto c : {image::Compression::kGzip, image::Compression::kZstd}) {
    fs::path dir = image::LayerCache::default_root(c);
    if (!fs::exists(dir)) continue;
    auto t = image::LayerCache(dir, c).trim(1, std::chrono::seconds(0), dry_run);
    if (t.blobs)
      out.push_back({builder::PruneKind::layer_cache, dir.string(),
                     std::to_string(t.blobs) + " compressed layers, " + std::to_string(t.bytes >> 20) +
                         " MiB (--caches; compressed again when next pushed)"});
  }
  return out;
}

int run_prune(const PruneFlags& f) {
  std::vector<image::Reference> repos;
  for (const auto& t : f.repos) repos.push_back(repository_ref(t));
  if (!repos.empty()) nightly::check_keep(f.keep);
  builder::PruneReport rep;
  rep.dry_run = f.dry_run;
  if (!f.no_engine) rep.append(builder::prune_engine(engine::local_engine(), f.dry_run));
  if (f.caches)
    for (auto& i : prune_caches(f.dry_run)) rep.removed.push_back(std::move(i));
  for (const auto& r : repos) {
    rep.append(nightly::prune_repository(*f.registry.registry(r.host), r.name, {.keep = f.keep, .dry_run = f.dry_run}));
  }
  std::cout << (f.json ? builder::to_json(rep).dump(2) + "\n" : builder::render_text(rep));
  return rep.ok() ? 0 : 1;
}

Registration prune_registration{
    {"prune",
     "Remove what nightlies leave behind: stale stage and dangling images here, old nightly tags (with .sig/.att) in "
     "registries",
     [](CLI::App& sub) -> Action {
       auto f = std::make_shared<PruneFlags>();
       sub.add_option("REPOSITORY", f->repos,
                      "docker://HOST/REPO whose dated nightly tags (<cell>-nightly-YYYYMMDD) to prune");
       sub.add_option("--keep", f->keep,
                      "nightly tags kept per cell, newest by date (required with a REPOSITORY, >= 1)");
       sub.add_flag("--no-engine", f->no_engine, "leave this host's Docker engine alone (registries only)");
       sub.add_flag("--caches", f->caches,
                    "also clear imgtool's layer cache (<cache dir>/layers, default ~/.cache/imgtool; bounded by "
                    "IMGTOOL_LAYER_CACHE_MAX_GB)");
       sub.add_flag("--dry-run", f->dry_run, "print what would go, one line each; delete nothing");
       sub.add_flag("--json", f->json, "print the report as JSON");
       f->registry.add(sub);
       return [f] { return run_prune(*f); };
     }}};

}  // namespace
}  // namespace imgtool::cli
