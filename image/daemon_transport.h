// The docker-daemon: transport, over the Docker Engine API on its Unix socket (image/engine_api.h:
// the run's one engine, core/engine.h: $DOCKER_HOST=unix://PATH, default /var/run/docker.sock).
//
//   DaemonSource       manifest(): inspects the image (config digest = image ID,
//                      diff_ids); every layer missing from the LayerCache is read
//                      from the `docker save` stream (GET /images/NAME/get) through
//                      libarchive — never extracted to disk — and compressed once,
//                      in parallel, diff_id and digest computed in the same pass.
//                      An image whose layers are all cached is not saved at all,
//                      and a cached layer is re-hashed only when its bytes are
//                      read (open_blob), so a re-push whose registry has every
//                      blob reads none.
//                      manifest_streaming() announces each layer as soon as it is
//                      in the cache, so the copy uploads it while the next one is
//                      read and compressed; with BlobEvents::streaming, earlier:
//                      each layer is handed out as a GrowingBlob when its
//                      compression starts, the compressed bytes going to the
//                      cache file and the stream in the same pass (the copy
//                      uploads it chunked as it is made). The stream is parsed without copies
//                      (curl's chunks go to libarchive as they are; entry data is
//                      taken with archive_read_data_block). With BlobEvents::tar,
//                      each saved layer's tar bytes go to a stream as well, as
//                      they are compressed, for a reader of the contents
//                      (the release gate: scan/stream_scans.h), which then
//                      never inflates the blob it just made.
//                      The manifest is an OCI manifest (OCI config/layer types).
//                      tar_layers()/read_tars(): the same save stream's layers
//                      handed out as tars, nothing compressed or cached (the
//                      reproducible copy normalizes them: image/normalize.h).
//   DaemonDestination  stages blobs in a temporary folder, then put_manifest()
//                      writes a `docker save`-format tar and POSTs /images/load
//                      (compressed layers are accepted as they are).
#pragma once
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>

#include "image/compress.h"
#include "image/engine_api.h"
#include "image/image.h"
#include "image/layer_cache.h"

namespace imgtool::image {

struct DaemonOptions {
  Compression compression = Compression::kGzip;
  int jobs = 0;                       // compression threads; 0 = all cores
  std::string cache_root;             // default: cache_dir()/layers/<algo>
  std::shared_ptr<EngineApi> engine;  // default: a client of the run's one engine (core/engine.h)
};

class DaemonSource : public ImageSource {
 public:
  DaemonSource(std::string name_tag, DaemonOptions o = {});
  Manifest manifest() override;
  // Announces cached layers at once, each saved layer as soon as it is
  // compressed into the cache, and the config when known.
  Manifest manifest_streaming(const BlobEvents& ev) override;
  std::unique_ptr<BlobReader> open_blob(const Descriptor& d) override;
  std::string describe() const override { return "docker-daemon:" + name_; }
  // The engine's diff_ids and image ID, without a save; read_tars() streams the save's layer tars
  // as they come, compressing and caching none (the normalizer's one read: image/normalize.h).
  std::optional<TarLayers> tar_layers() override;
  void read_tars(const std::vector<std::string>& want, const TarSink& each) override;

 private:
  std::vector<std::string> inspect();  // the diff_ids; sets config_digest_
  void read_tar_entry(void* archive, const std::string& oci, const std::string& legacy_key);
  void save_missing(const std::vector<std::string>& diff_ids, const std::string& config_digest);
  void read_save_entry(void* archive, const std::string& path, const std::vector<std::string>& diff_ids,
                       const std::string& config_digest);
  std::string name_;
  DaemonOptions opt_;
  std::shared_ptr<EngineApi> engine_;
  LayerCache cache_;
  std::string config_digest_, config_;
  BlobEvents ev_;  // during manifest_streaming()
  // During read_tars(): the layers wanted, where their streams go, the diff_ids streamed.
  std::vector<std::string> tar_want_, tar_seen_;
  const TarSink* tar_each_ = nullptr;
};

class DaemonDestination : public ImageDestination {
 public:
  // name_tag: the tag the loaded image gets when put_manifest() has no tag.
  DaemonDestination(std::string name_tag, DaemonOptions o = {});
  ~DaemonDestination() override;
  bool has_blob(const Descriptor& d) override;
  void put_blob(const Descriptor& d, BlobReader& content) override;
  void put_manifest(const Manifest& m, const std::string& tag) override;
  std::string describe() const override { return "docker-daemon:" + name_; }

 private:
  std::string name_;
  std::shared_ptr<EngineApi> engine_;
  std::filesystem::path stage_;
};

}  // namespace imgtool::image
