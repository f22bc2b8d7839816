#include "image/daemon_transport.h"

#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/paths.h"
#include "image/blob.h"
#include "image/trace.h"

namespace imgtool::image {
namespace {

// The engine the options name, else a client of the run's one engine (core/engine.h).
std::shared_ptr<EngineApi> engine_of(const DaemonOptions& o) {
  return o.engine ? o.engine : std::make_shared<EngineApi>();
}

std::string cache_root(const DaemonOptions& o) {
  if (!o.cache_root.empty()) return o.cache_root;
  return LayerCache::default_root(o.compression).string();
}

int jobs_of(const DaemonOptions& o) {
  return o.jobs > 0 ? o.jobs : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// libarchive pulls the save stream through this callback, chunk by chunk as
// curl delivered it (no copy: libarchive reads the chunk where it lies).
struct ArchiveFeed {
  ThreadedReader* in;
  std::string chunk;
  std::exception_ptr err;
};

la_ssize_t feed_read(struct archive*, void* ud, const void** out) {
  auto* f = static_cast<ArchiveFeed*>(ud);
  try {
    size_t n = f->in->read_chunk(f->chunk);
    *out = f->chunk.data();
    return static_cast<la_ssize_t>(n);
  } catch (...) {
    f->err = std::current_exception();
    return -1;
  }
}

}  // namespace

DaemonSource::DaemonSource(std::string name_tag, DaemonOptions o)
    : name_(std::move(name_tag)), opt_(o), engine_(engine_of(o)), cache_(cache_root(o), o.compression) {
  auto t = cache_.trim(LayerCache::trim_limit());
  if (t.blobs)
    trace("layer cache: removed " + std::to_string(t.blobs) + " least recently used blobs (" +
          std::to_string(t.bytes >> 20) + " MiB) to stay within IMGTOOL_LAYER_CACHE_MAX_GB");
}

Manifest DaemonSource::manifest() { return manifest_streaming({}); }

std::vector<std::string> DaemonSource::inspect() {
  trace("daemon: inspect " + name_);
  auto j = engine_->get_json("/images/" + name_ + "/json", describe() + ": inspect");
  if (!j) throw InputError(describe() + ": no such image in the Docker engine");
  config_digest_ = j->at("Id").get<std::string>();
  config_.clear();
  return j->at("RootFS").value("Layers", std::vector<std::string>{});
}

Manifest DaemonSource::manifest_streaming(const BlobEvents& ev) {
  const auto& ready = ev.ready;
  auto diff_ids = inspect();
  bool complete = true;
  for (auto& d : diff_ids) {
    auto c = cache_.find_unverified(d);  // re-hashed in open_blob(), only if its bytes are read
    if (!c)
      complete = false;
    else if (ready)
      ready(*c);  // cached: can move while the rest is saved
  }
  auto cfg = cache_.config(config_digest_);
  if (!complete || !cfg) {
    struct Reset {
      BlobEvents& e;
      ~Reset() { e = {}; }
    } reset{ev_};
    ev_ = ev;
    save_missing(diff_ids, config_digest_);
    cfg = cache_.config(config_digest_);
    if (!cfg) throw Error(describe() + ": docker save carried no config " + config_digest_);
  }
  if (config_.empty()) config_ = *cfg;
  if (ready) ready(Descriptor{media::kOciConfig, config_digest_, static_cast<int64_t>(config_.size())});
  nlohmann::json layers = nlohmann::json::array();
  for (auto& d : diff_ids) {
    auto c = cache_.find_unverified(d);
    if (!c) throw Error(describe() + ": docker save carried no layer with diff_id " + d);
    layers.push_back(*c);
  }
  Descriptor config{media::kOciConfig, config_digest_, static_cast<int64_t>(config_.size())};
  nlohmann::json m{{"schemaVersion", 2}, {"mediaType", media::kOciManifest}, {"config", config}, {"layers", layers}};
  return Manifest{m.dump(), media::kOciManifest};
}

void DaemonSource::save_missing(const std::vector<std::string>& diff_ids, const std::string& config_digest) {
  trace("save: GET /images/" + name_ + "/get");
  ThreadedReader body([this](PipeReader& pipe) {
    int64_t total = 0;
    engine_->get_stream("/images/" + name_ + "/get", describe() + ": docker save", [&](const char* p, size_t n) {
      if (total == 0) trace("save: first bytes");
      total += static_cast<int64_t>(n);
      return pipe.push(p, n);
    });
    trace("save: stream ended, " + std::to_string(total >> 20) + " MiB");
  });
  ArchiveFeed feed{&body};
  struct archive* a = archive_read_new();
  archive_read_support_format_tar(a);
  if (archive_read_open(a, &feed, nullptr, feed_read, nullptr) != ARCHIVE_OK) {
    std::string msg = archive_error_string(a) ? archive_error_string(a) : "?";
    archive_read_free(a);
    if (feed.err) std::rethrow_exception(feed.err);
    throw Error(describe() + ": cannot read the docker save stream: " + msg);
  }
  struct archive_entry* e;
  int rc;
  try {
    while ((rc = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
      if (trace_enabled())
        trace(std::string("save: entry ") + archive_entry_pathname(e) + " " + std::to_string(archive_entry_size(e)));
      read_save_entry(a, archive_entry_pathname(e), diff_ids, config_digest);
    }
  } catch (...) {
    archive_read_free(a);
    throw;
  }
  std::string msg = rc == ARCHIVE_EOF ? "" : (archive_error_string(a) ? archive_error_string(a) : "?");
  archive_read_free(a);
  if (feed.err) std::rethrow_exception(feed.err);
  if (!msg.empty()) throw Error(describe() + ": broken docker save stream: " + msg);
}

namespace {

std::string read_entry_string(struct archive* a) {
  std::string s;
  char buf[65536];
  la_ssize_t n;
  while ((n = archive_read_data(a, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
  if (n < 0) throw Error(std::string("docker save stream: ") + archive_error_string(a));
  return s;
}

// Hands `n` bytes to a stream while it is taken; a stream its reader abandoned is dropped (nullptr).
void push_or_drop(GrowingBlob*& s, const char* p, size_t n) {
  if (s && !s->push(p, n)) s = nullptr;
}

// The current entry's data, block by block where libarchive holds it (usually the feed chunk
// itself: no copy into a buffer of ours), sparse holes as zeros; returns the seconds spent waiting
// for libarchive (the rest is `fn`'s).
double read_entry_blocks(struct archive* a, const std::function<void(const char*, size_t)>& fn) {
  using clk = std::chrono::steady_clock;
  static const std::vector<char> zeros(1 << 16);
  double waited = 0;
  const void* p;
  size_t n;
  la_int64_t off, at = 0;
  for (;;) {
    auto r0 = clk::now();
    int rc = archive_read_data_block(a, &p, &n, &off);
    waited += std::chrono::duration<double>(clk::now() - r0).count();
    if (rc == ARCHIVE_EOF) return waited;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
      throw Error(std::string("docker save stream: ") + archive_error_string(a));
    for (; at < off; at += std::min<la_int64_t>(off - at, zeros.size()))  // a sparse hole (not in docker's tars)
      fn(zeros.data(), static_cast<size_t>(std::min<la_int64_t>(off - at, zeros.size())));
    fn(static_cast<const char*>(p), n);
    at += static_cast<la_int64_t>(n);
  }
}

// Compresses the current entry into `out` and, while `stream` is set, into
// the stream as well (dropped once its reader has abandoned it); `tar`, while
// set, gets the entry's bytes uncompressed (BlobEvents::tar).
CompressedLayer compress_entry(struct archive* a, Compression c, int jobs, AtomicFile& out, GrowingBlob* stream,
                               GrowingBlob* tar) {
  using clk = std::chrono::steady_clock;
  double t_read = 0, t_comp = 0, t_out = 0;
  auto t0 = clk::now();
  LayerCompressor comp(c, jobs, [&](const char* p, size_t n) {
    auto w0 = clk::now();
    out.write(std::string_view(p, n));
    push_or_drop(stream, p, n);
    t_out += std::chrono::duration<double>(clk::now() - w0).count();
  });
  t_read = read_entry_blocks(a, [&](const char* p, size_t n) {
    push_or_drop(tar, p, n);
    comp.write(p, n);
  });
  t_comp = std::chrono::duration<double>(clk::now() - t0).count() - t_read;
  auto f0 = clk::now();
  CompressedLayer l = comp.finish();
  double t_fin = std::chrono::duration<double>(clk::now() - f0).count();
  if (trace_enabled())
    trace("layer " + l.diff_id.substr(7, 12) + ": " + std::to_string(l.uncompressed_size >> 20) + " MiB -> " +
          std::to_string(l.size >> 20) + " MiB in " +
          std::to_string(std::chrono::duration<double>(clk::now() - t0).count()) + " s (read/wait " +
          std::to_string(t_read) + ", compress+hash " + std::to_string(t_comp - t_out) + ", file write+stream " +
          std::to_string(t_out) + ", finish " + std::to_string(t_fin) + ")");
  return l;
}

}  // namespace

void DaemonSource::read_save_entry(void* ap, const std::string& path, const std::vector<std::string>& diff_ids,
                                   const std::string& config_digest) {
  auto* a = static_cast<struct archive*>(ap);
  bool legacy_layer = path.size() > 10 && path.compare(path.size() - 10, 10, "/layer.tar") == 0;
  bool oci_blob = path.rfind("blobs/sha256/", 0) == 0;
  bool legacy_config = path.find('/') == std::string::npos && path != "manifest.json" && path.size() > 5 &&
                       path.compare(path.size() - 5, 5, ".json") == 0;
  std::string named = oci_blob        ? "sha256:" + path.substr(13)
                      : legacy_config ? "sha256:" + path.substr(0, path.size() - 5)
                                      : "";
  if (named == config_digest) {
    std::string bytes = read_entry_string(a);
    cache_.put_config(bytes);
    if (config_.empty() && sha256_digest(bytes) == config_digest) {
      config_ = std::move(bytes);  // not changed again: open_blob() may now serve it from another thread
      if (ev_.ready) ev_.ready(Descriptor{media::kOciConfig, config_digest, static_cast<int64_t>(config_.size())});
    }
    return;
  }
  if (tar_each_) {
    if (legacy_layer || oci_blob)
      read_tar_entry(a, oci_blob ? named : "", legacy_layer ? path.substr(0, path.size() - 10) : "");
    return;
  }
  bool wanted_blob = oci_blob && std::find(diff_ids.begin(), diff_ids.end(), named) != diff_ids.end();
  if (!legacy_layer && !wanted_blob) return;  // other entries: skipped by the next header read
  std::string key = oci_blob ? named.substr(7) : path.substr(0, path.size() - 10);
  if (auto known = oci_blob ? std::optional<std::string>(named) : cache_.saved_diff_id(key);
      known && cache_.find(*known))
    return;
  auto blob = cache_.new_blob();  // removed when an error leaves here without its commit
  std::shared_ptr<GrowingBlob> stream, tar;
  try {
    if (ev_.streaming) {
      stream = std::make_shared<GrowingBlob>(oci_layer_media_type(opt_.compression));
      ev_.streaming(stream);
    }
    if (ev_.tar) {
      tar = std::make_shared<GrowingBlob>(media::kOciLayerTar);
      ev_.tar(tar);
    }
    CompressedLayer l = compress_entry(a, opt_.compression, jobs_of(opt_), *blob, stream.get(), tar.get());
    if (tar) tar->end(Descriptor{media::kOciLayerTar, l.diff_id, l.uncompressed_size});
    // The stream ends once the blob is in place (a reader that gave up reads it from there),
    // before the cache's fsync'd bookkeeping: the upload's PUT need not wait for the disk.
    Descriptor d = cache_.commit(*blob, l, [&](const Descriptor& placed) {
      if (stream) stream->end(placed);
    });
    if (!oci_blob) cache_.remember_saved(key, l.diff_id);
    trace("layer " + l.diff_id.substr(7, 12) + ": in the cache");
    if (ev_.ready && std::find(diff_ids.begin(), diff_ids.end(), l.diff_id) != diff_ids.end()) ev_.ready(d);
  } catch (...) {
    if (stream && !stream->descriptor()) stream->fail(std::current_exception());
    if (tar && !tar->descriptor()) tar->fail(std::current_exception());
    throw;
  }
}

std::optional<TarLayers> DaemonSource::tar_layers() {
  TarLayers t{.diff_ids = inspect()};
  t.config_digest = config_digest_;
  if (auto cfg = cache_.config(config_digest_)) config_ = *cfg;
  for (const auto& d : t.diff_ids) t.stored.push_back(cache_.find_unverified(d));  // re-hashed in open_blob()
  return t;
}

void DaemonSource::read_tars(const std::vector<std::string>& want, const TarSink& each) {
  if (want.empty() && !config_.empty()) return;
  struct Reset {
    DaemonSource& s;
    ~Reset() { s.tar_each_ = nullptr; }
  } reset{*this};
  tar_want_ = want;
  tar_seen_.clear();
  static const TarSink kNone = [](const std::shared_ptr<StreamingBlob>&) {};
  tar_each_ = each ? &each : &kNone;
  save_missing({}, config_digest_);
  if (config_.empty()) throw Error(describe() + ": docker save carried no config " + config_digest_);
  for (const auto& d : want)  // a legacy layer is known by its diff_id once read (remember_saved)
    if (!std::count(tar_seen_.begin(), tar_seen_.end(), d))
      throw Error(describe() + ": docker save carried no layer with diff_id " + d);
}

// The current entry, a layer, streamed uncompressed when `want` names it; `oci` is its name in an OCI
// save (its diff_id), `legacy_key` its folder in a legacy one (known by its diff_id after a first read).
void DaemonSource::read_tar_entry(void* ap, const std::string& oci, const std::string& legacy_key) {
  auto* a = static_cast<struct archive*>(ap);
  std::optional<std::string> known = oci.empty() ? cache_.saved_diff_id(legacy_key) : std::optional(oci);
  bool wanted = known ? std::count(tar_want_.begin(), tar_want_.end(), *known) > 0 : !tar_want_.empty();
  if (!wanted) return;  // skipped by the next header read
  auto tar = std::make_shared<GrowingBlob>(media::kOciLayerTar);
  (*tar_each_)(tar);
  try {
    Sha256 h;
    int64_t size = 0;
    GrowingBlob* s = tar.get();
    read_entry_blocks(a, [&](const char* p, size_t n) {
      h.update(p, n);
      size += static_cast<int64_t>(n);
      push_or_drop(s, p, n);
    });
    std::string diff_id = h.digest();
    if (!oci.empty() && diff_id != oci)
      throw Error(describe() + ": docker save's layer " + oci + " holds bytes whose digest is " + diff_id);
    if (oci.empty()) cache_.remember_saved(legacy_key, diff_id);
    tar_seen_.push_back(diff_id);
    tar->end(Descriptor{media::kOciLayerTar, diff_id, size});
  } catch (...) {
    if (!tar->descriptor()) tar->fail(std::current_exception());
    throw;
  }
}

std::unique_ptr<BlobReader> DaemonSource::open_blob(const Descriptor& d) {
  if (d.digest == config_digest_ && config_.empty()) read_tars({}, nullptr);  // after tar_layers(): not held yet
  if (d.digest == config_digest_) return std::make_unique<StringReader>(config_);
  // Written and hashed by this process's cache in the same pass, or re-hashed now (once per
  // process) before its bytes are used; destinations verify again.
  if (!cache_.verify(d.digest))
    throw Error(describe() + ": the cached layer " + d.digest + " under " + cache_.root().string() +
                " no longer hashes to its name (changed on disk); it was removed, run the copy again");
  return std::make_unique<FileReader>(cache_.blob_path(d.digest));
}

DaemonDestination::DaemonDestination(std::string name_tag, DaemonOptions o)
    : name_(std::move(name_tag)), engine_(engine_of(o)) {
  // mkdtemp: a fresh 0700 folder no one else can have prepared (has_blob trusts what is in it).
  std::string tmpl = (std::filesystem::temp_directory_path() / "imgtool-load-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw Error("cannot create a private temporary folder for docker load");
  stage_ = tmpl;
}

DaemonDestination::~DaemonDestination() {
  std::error_code ec;
  std::filesystem::remove_all(stage_, ec);
}

bool DaemonDestination::has_blob(const Descriptor& d) { return std::filesystem::exists(stage_ / d.digest.substr(7)); }

void DaemonDestination::put_blob(const Descriptor& d, BlobReader& content) {
  auto tmp = stage_ / (d.digest.substr(7) + ".part");
  std::ofstream out(tmp, std::ios::binary);
  Sha256 sha;
  std::vector<char> buf(1 << 20);
  while (size_t n = content.read(buf.data(), buf.size())) {
    sha.update(buf.data(), n);
    out.write(buf.data(), static_cast<std::streamsize>(n));
  }
  out.close();
  if (sha.digest() != d.digest) throw Error(describe() + ": blob content does not hash to " + d.digest);
  std::filesystem::rename(tmp, stage_ / d.digest.substr(7));
}

namespace {

void add_file(struct archive* w, const std::string& name, const std::filesystem::path& src) {
  struct archive_entry* e = archive_entry_new();
  archive_entry_set_pathname(e, name.c_str());
  archive_entry_set_size(e, static_cast<la_int64_t>(std::filesystem::file_size(src)));
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_perm(e, 0644);
  archive_write_header(w, e);
  std::ifstream in(src, std::ios::binary);
  std::vector<char> buf(1 << 20);
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0)
    archive_write_data(w, buf.data(), static_cast<size_t>(in.gcount()));
  archive_entry_free(e);
}

}  // namespace

void DaemonDestination::put_manifest(const Manifest& m, const std::string& tag) {
  std::string repo_tag = name_;
  if (!tag.empty())
    repo_tag = name_.substr(0, name_.rfind(':') == std::string::npos || name_.rfind(':') < name_.rfind('/')
                                   ? name_.size()
                                   : name_.rfind(':')) +
               ":" + tag;
  nlohmann::json entry{
      {"Config", m.config().digest.substr(7) + ".json"}, {"RepoTags", {repo_tag}}, {"Layers", nlohmann::json::array()}};
  for (auto& l : m.layers()) entry["Layers"].push_back(l.digest.substr(7) + "/layer.tar");
  write_file_atomic(stage_ / "manifest.json", nlohmann::json::array({entry}).dump());
  auto tar = stage_ / "load.tar";
  struct archive* w = archive_write_new();
  archive_write_set_format_pax_restricted(w);
  archive_write_open_filename(w, tar.c_str());
  add_file(w, "manifest.json", stage_ / "manifest.json");
  add_file(w, m.config().digest.substr(7) + ".json", stage_ / m.config().digest.substr(7));
  for (auto& l : m.layers()) add_file(w, l.digest.substr(7) + "/layer.tar", stage_ / l.digest.substr(7));
  archive_write_close(w);
  archive_write_free(w);
  FileReader in(tar);
  engine_->post("/images/load?quiet=1", describe() + ": docker load", in,
                static_cast<int64_t>(std::filesystem::file_size(tar)), "application/x-tar");
}

}  // namespace imgtool::image
