#include "builder/normalize_built.h"

#include "core/error.h"
#include "core/fs.h"
#include "image/transport.h"

namespace imgtool::builder {

NormalizedBuild normalize_built(engine::Engine& docker, const std::string& image, int64_t epoch,
                                const std::vector<image::NormalizeRule>& rules,
                                const std::filesystem::path& work_parent) {
  std::filesystem::create_directories(work_parent);
  PrivateTempDir work("normalize-", work_parent);
  std::string layout = "oci:" + (work.path() / "image").string() + ":image";
  image::NormalizeResult r;
  {
    auto src = docker.save(image);
    auto dst = image::open_destination(image::parse_reference(layout));
    image::LayerCache cache(image::LayerCache::default_root(image::Compression::kGzip), image::Compression::kGzip);
    r = image::normalize_image(*src, *dst, {.epoch = epoch, .rules = rules, .spool_dir = work.path(), .cache = &cache},
                               "image");
  }
  auto normalized = image::open_source(layout);
  docker.load(*normalized, image);
  NormalizedBuild out{.image_id = r.manifest.config().digest, .layers = r.layers.size()};
  for (const auto& l : r.layers) {
    out.mtimes_clamped += l.mtimes_clamped;
    out.pyc_rewritten += l.pyc_rewritten;
    out.dropped += l.dropped.size();
    out.cached += l.cached;
  }
  auto now = docker.inspect(image);
  if (!now || now->id != out.image_id)
    throw Error("normalize " + image + ": the engine holds " + (now ? now->id : std::string("nothing")) +
                " under the name after loading " + out.image_id);
  return out;
}

}  // namespace imgtool::builder
