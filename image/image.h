// The image model: one read-only view of an OCI/Docker image that every
// transport produces (ImageSource) or consumes (ImageDestination). The copy
// engine (copy.h) sees only this model; `docker-daemon:`, `oci:` and
// `docker://` are implementations chosen from one scheme table (transport.h).
//
// Data model
//   Descriptor   media type + digest + size (+ annotations) of one blob.
//   Manifest     OCI image manifest (or Docker v2 schema 2): config + layers.
//                Kept as raw bytes: its digest is sha256 over exactly those bytes.
//   Blob         content-addressed bytes (config, layers, signature payloads).
//
// Contracts
//   - Everything read by digest is re-hashed; a mismatch throws imgtool::Error.
//   - A destination MUST receive every blob a manifest names before the
//     manifest itself (put_blob ... then put_manifest); a tag is set last.
#pragma once
#include <functional>
#include <istream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace imgtool::image {

namespace media {
inline constexpr const char* kOciManifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr const char* kOciIndex = "application/vnd.oci.image.index.v1+json";
inline constexpr const char* kOciConfig = "application/vnd.oci.image.config.v1+json";
inline constexpr const char* kOciLayerTar = "application/vnd.oci.image.layer.v1.tar";
inline constexpr const char* kOciLayerGzip = "application/vnd.oci.image.layer.v1.tar+gzip";
inline constexpr const char* kOciLayerZstd = "application/vnd.oci.image.layer.v1.tar+zstd";
inline constexpr const char* kDockerManifest = "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr const char* kDockerList = "application/vnd.docker.distribution.manifest.list.v2+json";
inline constexpr const char* kDockerConfig = "application/vnd.docker.container.image.v1+json";
inline constexpr const char* kDockerLayerGzip = "application/vnd.docker.image.rootfs.diff.tar.gzip";
}  // namespace media

struct Descriptor {
  std::string media_type;
  std::string digest;  // "sha256:<hex>"
  int64_t size = 0;
  std::map<std::string, std::string> annotations;
};
void to_json(nlohmann::json& j, const Descriptor& d);
void from_json(const nlohmann::json& j, Descriptor& d);

struct Manifest {
  std::string raw;             // exact bytes
  std::string media_type;      // from the manifest's mediaType (or the transport)
  std::string digest() const;  // sha256 over raw
  nlohmann::json json() const;
  Descriptor config() const;
  std::vector<Descriptor> layers() const;
};

// A reader for one blob's bytes. read() returns 0 at the end. Implementations
// verify the digest when the stream ends and throw imgtool::Error on mismatch.
class BlobReader {
 public:
  virtual ~BlobReader() = default;
  virtual size_t read(char* buf, size_t len) = 0;
};

// Reads everything from r into a string (small blobs: configs, manifests,
// signature payloads); throws imgtool::Error past `max` bytes (default 4 MiB).
inline constexpr size_t kMaxSmallBlobBytes = 4u << 20;
std::string read_all(BlobReader& r, size_t max = kMaxSmallBlobBytes);

// A blob handed out while its producer is still making it (a daemon layer
// being compressed): read() yields the bytes as they are made, and the digest
// and size exist only once read() has returned 0 (descriptor()). abandon(): the
// reader stops early; the producer carries on without it (blob.h GrowingBlob).
class StreamingBlob : public BlobReader {
 public:
  virtual const std::string& media_type() const = 0;
  virtual std::optional<Descriptor> descriptor() const = 0;  // set at the end of the stream
  virtual void abandon() = 0;
};

// What a source announces while it works out its manifest (manifest_streaming).
struct BlobEvents {
  // A blob open_blob(d) can now serve whole.
  std::function<void(const Descriptor&)> ready;
  // A blob still being produced; empty = the consumer cannot take streams
  // (then the source announces the blob through `ready` once it is whole).
  std::function<void(std::shared_ptr<StreamingBlob>)> streaming;
  // Each layer the source reads UNCOMPRESSED while it works (a daemon's save stream): its tar
  // bytes as they are read, in the source's order; descriptor() at the end names it by its diff_id
  // (media type kOciLayerTar). For a reader of the contents (scan/stream_scans.h), which then
  // need not inflate the compressed blob again. A layer the source has already (cached) is not
  // streamed; abandon() leaves the source to carry on without that stream.
  std::function<void(std::shared_ptr<StreamingBlob>)> tar;
};

// A source's layers as it holds them uncompressed (ImageSource::tar_layers): docker-daemon:, whose
// save stream carries tars, hands them out so before it compresses any. Named by diff_id, the
// source's own account of them (the engine's; the bytes read are hashed and must agree).
struct TarLayers {
  std::string config_digest;
  std::vector<std::string> diff_ids;              // in the image's order
  std::vector<std::optional<Descriptor>> stored;  // per layer: a compressed blob open_blob() serves already
};
using TarSink = std::function<void(std::shared_ptr<StreamingBlob>)>;

// Where a source's blobs already lie in a registry: a destination on the same registry can mount
// them into its repository instead of uploading them (the OCI cross-repository blob mount).
struct MountOrigin {
  std::string host;  // "127.0.0.1:5000"
  std::string repo;  // "ai/paddle"
};

class ImageSource {
 public:
  virtual ~ImageSource() = default;
  // The manifest of the referenced image (resolving a tag if needed).
  virtual Manifest manifest() = 0;
  // Like manifest(), for sources that produce blobs while working out the
  // manifest (docker-daemon: compresses layers as the save stream arrives):
  // ev.ready(d) is called, on the calling thread, for each blob as soon as
  // open_blob(d) can serve it, so a copy can move it before the manifest
  // exists; ev.streaming(s), if set, even earlier, while the blob is being
  // made (its producer then ends or fails every stream it handed out, and a
  // stream's blob is announced through ready() too once whole). A blob may be
  // announced more than once; an exception thrown by a callback aborts and
  // propagates. Default: manifest(), nothing announced early.
  virtual Manifest manifest_streaming(const BlobEvents& ev) { return manifest(); }
  // Any blob named by the manifest, as stored (compressed for layers).
  virtual std::unique_ptr<BlobReader> open_blob(const Descriptor& d) = 0;
  // A human name of the reference, for messages.
  virtual std::string describe() const = 0;
  // The registry repository holding these blobs, when there is one (docker://).
  virtual std::optional<MountOrigin> mount_origin() const { return std::nullopt; }
  // A source that reads its layers uncompressed (docker-daemon:) says what they are without reading
  // them; nullopt for the others (their layers are read through open_blob).
  virtual std::optional<TarLayers> tar_layers() { return std::nullopt; }
  // After tar_layers(): the tar of each layer whose diff_id is in `want`, all in ONE read, in the
  // source's order, handed to `each` on the calling thread as a stream the caller drains (or
  // abandons) on another thread; its descriptor() at the end names it by the diff_id of the bytes
  // read (kOciLayerTar). A layer the source cannot tell apart before reading it may come too (its
  // diff_id then names it). The config comes along when not held; open_blob() serves it afterwards.
  virtual void read_tars(const std::vector<std::string>& want, const TarSink& each);
};

class ImageDestination {
 public:
  virtual ~ImageDestination() = default;
  // True if the blob already exists there (the copy skips it).
  virtual bool has_blob(const Descriptor& d) = 0;
  // Stores a blob; the digest is verified while writing.
  virtual void put_blob(const Descriptor& d, BlobReader& content) = 0;
  // Streams: a blob whose digest is known only at its end (the OCI chunked
  // upload: POST, PATCH the stream, PUT ?digest=). Returns the stored blob's
  // descriptor. Only called when accepts_streams(); a throw leaves the stream
  // partly read (the copy engine then reads it to its end and falls back to
  // put_blob of the whole blob).
  virtual bool accepts_streams() const { return false; }
  virtual Descriptor put_blob_stream(StreamingBlob& content);
  // Stores the manifest by digest and, if tag is non-empty, points tag at it.
  virtual void put_manifest(const Manifest& m, const std::string& tag) = 0;
  virtual std::string describe() const = 0;
  // The copy engine offers the source's origin; a destination that can mount from it keeps it.
  virtual void offer_mount(const MountOrigin&) {}
};

}  // namespace imgtool::image
