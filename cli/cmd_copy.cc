// imgtool copy SRC DST: one image between docker-daemon:, oci: and docker://.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/sign_common.h"
#include "cli/subcommand.h"
#include "core/error.h"
#include "image/copy.h"
#include "image/normalize.h"
#include "image/transport.h"

namespace imgtool::cli {
namespace {

struct CopyFlags {
  std::string src, dst, compression = "gzip", rules;
  int jobs = 4;
  int64_t reproducible = 0;  // --reproducible EPOCH: normalized (image/normalize.h)
  bool json = false, verbose = false, renormalize = false;
  RegistryFlags registry;  // --ca-file, --insecure-http; one session for the source and the destination
};

image::TransportOptions transport_options(const CopyFlags& f) {
  image::TransportOptions o = f.registry.transport();
  auto c = image::parse_compression(f.compression);
  if (!c) throw InputError("--compression: expected gzip or zstd, found '" + f.compression + "'");
  o.daemon.compression = *c;
  return o;
}

// --reproducible: the image written deterministically (image/normalize.h): the same files give the
// same digest whenever and wherever they were built.
int copy_reproducible(const CopyFlags& f, image::ImageSource& src, image::ImageDestination& dst,
                      const std::string& tag) {
  if (f.reproducible < 0)
    throw InputError("--reproducible: expected SOURCE_DATE_EPOCH (seconds since 1970), found " +
                     std::to_string(f.reproducible));
  image::LayerCache cache(image::LayerCache::default_root(image::Compression::kGzip), image::Compression::kGzip);
  cache.trim(image::LayerCache::trim_limit());
  image::NormalizeOptions o{.epoch = f.reproducible,
                            .rules = image::read_normalize_rules(f.rules.empty() ? image::default_normalize_rules()
                                                                                 : std::filesystem::path(f.rules)),
                            .jobs = f.jobs,
                            .cache = &cache,
                            .reuse_cached = !f.renormalize};
  image::NormalizeResult r = image::normalize_image(src, dst, o, tag);
  size_t dropped = 0, pyc = 0, clamped = 0, spooled = 0, cached = 0;
  for (const auto& l : r.layers)
    dropped += l.dropped.size(), pyc += l.pyc_rewritten, clamped += l.mtimes_clamped, spooled += l.spooled,
        cached += l.cached;
  if (f.json) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : r.layers)
      layers.push_back({{"from", l.from_digest},
                        {"digest", l.to.digest},
                        {"diff_id", l.diff_id},
                        {"dropped", l.dropped},
                        {"pyc_rewritten", l.pyc_rewritten},
                        {"mtimes_clamped", l.mtimes_clamped},
                        {"spooled", l.spooled},
                        {"cached", l.cached}});
    std::cout << nlohmann::json{{"source", f.src},
                                {"destination", f.dst},
                                {"digest", r.manifest.digest()},
                                {"source_date_epoch", f.reproducible},
                                {"layers", layers}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "copied " << f.src << " -> " << f.dst << " " << r.manifest.digest() << " (reproducible, epoch "
              << f.reproducible << ": " << clamped << " mtime(s) clamped, " << pyc << " .pyc rewritten, " << dropped
              << " build record(s) dropped, " << spooled << " of " << r.layers.size()
              << " layer(s) put in path order through a spool, " << cached << " found normalized in the layer cache)\n";
  }
  return 0;
}

int run_copy(const CopyFlags& f) {
  image::Reference src = image::parse_reference(f.src), dst = image::parse_reference(f.dst);
  if (f.jobs < 1) throw InputError("--jobs: expected a positive number, found " + std::to_string(f.jobs));
  if (f.renormalize && !f.reproducible)
    throw InputError("--renormalize: expected --reproducible EPOCH beside it (it says how to normalize)");
  auto o = transport_options(f);
  auto source = image::open_source(src, o);
  auto dest = image::open_destination(dst, o);
  if (f.reproducible) return copy_reproducible(f, *source, *dest, dst.tag);
  image::CopyOptions co;
  co.jobs = f.jobs;
  if (f.verbose) co.log = [](const std::string& s) { std::cerr << "imgtool copy: " << s << "\n"; };
  image::CopyResult r = image::copy_image(*source, *dest, dst.tag, co);
  if (f.json) {
    nlohmann::json j{{"source", f.src},
                     {"destination", f.dst},
                     {"digest", r.digest},
                     {"media_type", r.media_type},
                     {"blobs", r.blobs},
                     {"blobs_skipped", r.blobs_skipped},
                     {"bytes_copied", r.bytes_copied},
                     {"seconds", r.seconds}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "copied " << f.src << " -> " << f.dst << " " << r.digest << " (" << r.blobs - r.blobs_skipped << "/"
              << r.blobs << " blobs, " << r.bytes_copied << " bytes, " << r.seconds << " s)\n";
  }
  return 0;
}

Registration copy_registration{
    {"copy", "Copy an image between docker-daemon:NAME:TAG, oci:DIR[:TAG] and docker://HOST/REPO[:TAG|@DIGEST]",
     [](CLI::App& sub) -> Action {
       auto f = std::make_shared<CopyFlags>();
       sub.add_option("SRC", f->src, "source reference")->required();
       sub.add_option("DST", f->dst, "destination reference")->required();
       sub.add_option("--compression", f->compression,
                      "layer compression for docker-daemon: sources: gzip (default) or zstd");
       sub.add_option("--jobs", f->jobs, "blobs transferred in parallel (default 4)");
       sub.add_option("--reproducible", f->reproducible,
                      "write the image deterministically with this SOURCE_DATE_EPOCH: entries in path order, mtimes "
                      "clamped, build records dropped, fixed gzip, config times set (image/normalize.h)");
       sub.add_option("--normalize-rules", f->rules,
                      "--reproducible: the rules file (default: image/normalize_rules.tsv)");
       sub.add_flag("--renormalize", f->renormalize,
                    "--reproducible: normalize every layer again, even one the layer cache holds normalized "
                    "(its entry is replaced)");
       f->registry.add(sub);
       sub.add_flag("--json", f->json, "print the result as JSON");
       sub.add_flag("-v,--verbose", f->verbose, "log each blob");
       return [f] { return run_copy(*f); };
     }}};

}  // namespace
}  // namespace imgtool::cli
