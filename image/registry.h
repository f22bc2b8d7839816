// A client for one OCI distribution registry (opencontainers/distribution-spec),
// the `docker://` transport's engine and the API signing/promote build on.
//
// Data model: a Registry is one host ("registry.corp:5000"); repositories are
// paths in it ("ai/paddle"); a reference `ref` is a tag or "sha256:<hex>".
//
// Contracts
//   - Connection: https with verified TLS (system CAs or RegistryOptions::ca_file).
//     Plain http only for loopback hosts (127.0.0.0/8, localhost, [::1]) or with
//     insecure_http, and then only when the port answered the TLS handshake
//     with plain HTTP: a TLS verification failure, a reset, an alert or a
//     timeout is always an error, never a downgrade.
//   - Auth: anonymous, Basic, or the Bearer token flow from `WWW-Authenticate`
//     (GET with Basic credentials, or the OAuth2 refresh-token POST when the
//     credentials are an identity token), with credentials from RegistryOptions
//     or the Docker config (auth.h). Secrets never appear in messages. A token
//     is asked for the challenge's scopes (what the registry says the request
//     needs: `delete` for a manifest DELETE) plus the request's own
//     (`repository:<repo>:pull[,push]`; a cross-repository mount also
//     `repository:<from>:pull`), one `scope=` per scope (GET) or
//     space-separated (the OAuth2 POST).
//   - Credentials go only to the registry's own origin (the scheme+host+port of
//     base_url()) and to the token realm its own Bearer challenge names. A URL
//     the registry points elsewhere (upload `Location`, pagination `Link`, a
//     redirect) is requested with NO credentials — not even that origin's own
//     from the Docker config (a hostile registry would otherwise act with them:
//     the confused deputy) — and a 401 from it throws RegistryError (401), never
//     answered. No DELETE is ever sent to another origin. Once the registry
//     spoke https, no URL or redirect may lead to plain http; libcurl is limited
//     to https (+ http where it is allowed).
//   - Bounded: manifests, indexes, tag lists and small blobs read into memory
//     (get_blob_bytes: configs, signature payloads) at most kMaxMetadataBytes;
//     tokens and error bodies kMaxSmallBodyBytes; a blob's descriptor must have
//     a positive size, which bounds its stream; every request has a deadline.
//   - Idempotent steps (GET, HEAD, manifest PUT, tag list) are retried with
//     backoff on 429, 5xx and connection resets; blob uploads are not (a body
//     stream cannot be rewound): they throw an Error with retryable set, and the
//     copy engine re-opens the blob and tries again.
//   - Everything fetched by digest is re-hashed; a mismatch throws Error.
//   - All methods are safe to call from several threads at once.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "image/auth.h"
#include "image/image.h"

namespace imgtool::image {

struct RegistryOptions {
  std::string ca_file;                     // extra CA bundle (PEM); default: system CAs
  bool insecure_http = false;              // allow plain http for a non-loopback host
  std::optional<Credentials> credentials;  // default: looked up in the Docker config
  int attempts = 4;                        // tries for idempotent steps
  std::chrono::milliseconds backoff{200};  // first retry delay, doubled each time
  bool chunked_upload = false;             // PATCH chunks instead of one monolithic PUT
  int64_t chunk_size = 16 << 20;
  // Total deadline of one HTTP request: metadata (ping, manifests, tokens,
  // tag lists, upload sessions) and one blob upload or download.
  std::chrono::milliseconds request_timeout{std::chrono::minutes(2)};
  std::chrono::milliseconds blob_timeout{std::chrono::hours(2)};
};

// An error answer from the registry: HTTP status and the spec's error code
// (MANIFEST_UNKNOWN, UNAUTHORIZED, ...) when the body carried one.
struct RegistryError : Error {
  RegistryError(const std::string& what, bool retryable, long status, std::string code)
      : Error(what, retryable), status(status), code(std::move(code)) {}
  long status;
  std::string code;
};

struct ManifestInfo {
  std::string digest;      // "sha256:<hex>"
  std::string media_type;  // Content-Type
  int64_t size = 0;
};

// Accept header value listing the OCI and Docker manifest and index types.
extern const char* const kManifestAccept;

class Registry {
 public:
  explicit Registry(std::string host, RegistryOptions opt = {});
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  const std::string& host() const;
  // GET /v2/: picks the scheme and checks the host speaks the API. Called
  // lazily by every other method; call it first for an early, clear error.
  void ping();
  std::string base_url();  // "https://host" or "http://host" (pings first)

  // Manifests. `ref` is a tag or a digest.
  std::optional<ManifestInfo> head_manifest(const std::string& repo, const std::string& ref);
  Manifest get_manifest(const std::string& repo, const std::string& ref);  // verified if ref is a digest
  std::string resolve(const std::string& repo, const std::string& tag);    // tag -> digest
  // PUTs raw bytes with Content-Type media_type; returns the digest. ref may be
  // the digest itself (push by digest, no tag) or a tag.
  std::string put_manifest(const std::string& repo, const std::string& ref, const std::string& raw,
                           const std::string& media_type);
  void delete_manifest(const std::string& repo, const std::string& digest);
  // Every tag, page by page (`n=1000`, then each page's RFC 8288 `rel="next"` Link, resolved
  // against that page: image/link_header.h). Whole or an error, never a partial list: a non-200
  // page after the first, a page that is not a tag list or names a non-tag, a malformed Link, the
  // same next page twice, more than 1000 pages or a million tags all throw. A 404 on the first
  // page (no such repository) is an empty list.
  std::vector<std::string> list_tags(const std::string& repo);
  // OCI 1.1 referrers of `digest`; if the registry lacks the API (404), the
  // index under the fallback tag "sha256-<hex>" is read instead.
  std::vector<Descriptor> referrers(const std::string& repo, const std::string& digest,
                                    const std::string& artifact_type = "");

  // Blobs.
  std::optional<int64_t> head_blob(const std::string& repo, const std::string& digest);  // size if present
  // Cross-repository mount; false if the registry started an upload instead (that session is
  // cancelled with a DELETE only when its Location is on the registry's own origin) or refused
  // the mount with 401/403 (no pull on `from_repo`): the caller then uploads the blob.
  bool mount_blob(const std::string& repo, const std::string& digest, const std::string& from_repo);
  void put_blob(const std::string& repo, const Descriptor& d, BlobReader& content);
  // The OCI chunked upload of a blob whose digest is known only at its end:
  // POST, one PATCH streaming `content` (Transfer-Encoding: chunked) as it is
  // produced, PUT ?digest= with content.descriptor(). Not retried (the stream
  // cannot be rewound); a registry refusing PATCH throws a RegistryError with
  // its status, and the caller falls back to put_blob of the whole blob.
  Descriptor put_blob_stream(const std::string& repo, StreamingBlob& content);
  Descriptor put_blob(const std::string& repo, const std::string& bytes, const std::string& media_type);
  std::unique_ptr<BlobReader> get_blob(const std::string& repo, const Descriptor& d);  // streamed, verified
  std::string get_blob_bytes(const std::string& repo, const Descriptor& d);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True for 127.0.0.0/8 address literals, `localhost` and ::1 (with or without
// a port, "[::1]:5000"); a name such as "127.evil.com" is NOT loopback.
bool is_loopback_host(const std::string& host);

}  // namespace imgtool::image
