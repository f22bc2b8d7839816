#include "image/registry.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "core/hash.h"
#include "core/json_file.h"
#include "core/refname.h"
#include "core/strings.h"
#include "image/blob.h"
#include "image/http.h"
#include "image/link_header.h"
#include "image/registry_transport.h"
#include "image/trace.h"

namespace imgtool::image {

const char* const kManifestAccept =
    "Accept: application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, "
    "application/vnd.docker.distribution.manifest.v2+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json";

namespace {

// A tag listing is read page by page until the registry sends no `next` Link; these bound a
// registry that never stops (1000 pages of n=1000 is a million tags).
constexpr int kMaxTagPages = 1000;
constexpr size_t kMaxTags = 1000000;

// The tags of one page (`{"name": …, "tags": [...]}`; "tags" null or absent: none). Anything
// else — not JSON, a tag that is not a tag — throws: a listing is complete or it is an error.
std::vector<std::string> page_tags(const std::string& body, const std::string& where) {
  auto j = parse_json_or_discarded(body);
  if (j.is_discarded() || !j.is_object())
    throw Error(where + ": expected a JSON object {\"tags\": [...]}, found " + strings::quoted(body));
  auto it = j.find("tags");
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_array()) throw Error(where + ": expected \"tags\" to be an array, found " + it->dump());
  std::vector<std::string> out;
  for (const auto& t : *it) {
    if (!t.is_string() || !refname::is_tag(t.get<std::string>()))
      throw Error(where + ": expected tag names, found " + strings::quoted(t.dump()));
    out.push_back(t.get<std::string>());
  }
  return out;
}

// The next page's URL, resolved against the page that named it (RFC 8288: the link's
// context is the requested resource); "" when the page has no `next` link.
std::string next_page(const HttpResponse& resp, const std::string& page_url) {
  auto next = find_link(parse_link_header(resp.header("link")), "next");
  return next ? resolve_url(page_url, *next) : "";
}

// A header value that must be a non-negative decimal number (Content-Length).
int64_t parse_size(const std::string& v, const std::string& what) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || n < 0)
    throw Error(what + ": expected a size, found '" + v + "'");
  return n;
}

// A descriptor the registry is asked to serve must name a positive size: the
// size bounds the read (a size of 0 or less would leave it unbounded).
void check_descriptor(const Descriptor& d, const std::string& where) {
  if (d.size <= 0)
    throw Error(where + ": invalid descriptor for " + d.digest + ": size " + std::to_string(d.size) +
                ", expected a positive size");
}

}  // namespace

// The client is the distribution API over one transport (image/registry_transport.h).
struct Registry::Impl : RegistryTransport {
  using RegistryTransport::RegistryTransport;
};

Registry::Registry(std::string host, RegistryOptions opt)
    : impl_(std::make_unique<Impl>(std::move(host), std::move(opt))) {}
Registry::~Registry() = default;

const std::string& Registry::host() const { return impl_->host; }

void Registry::ping() {
  HttpResponse r = impl_->send_retry({"GET", "/v2/"}, "", Access::kPull);
  if (r.status != 200) throw impl_->fail("GET /v2/ (is this an OCI registry?)", r);
}

std::string Registry::base_url() { return impl_->pick_base(); }

std::optional<ManifestInfo> Registry::head_manifest(const std::string& repo, const std::string& ref) {
  HttpRequest r{"HEAD", "/v2/" + repo + "/manifests/" + ref, {kManifestAccept}};
  HttpResponse resp = impl_->send_retry(r, repo, Access::kPull);
  if (resp.status == 404) return std::nullopt;
  if (resp.status != 200) throw impl_->fail("HEAD manifest " + repo + ":" + ref, resp);
  ManifestInfo mi{resp.header("docker-content-digest"), resp.header("content-type"), 0};
  if (auto cl = resp.header("content-length"); !cl.empty())
    mi.size = parse_size(cl, "HEAD manifest " + repo + ":" + ref);
  if (mi.digest.empty()) mi.digest = get_manifest(repo, ref).digest();  // header is optional
  return mi;
}

Manifest Registry::get_manifest(const std::string& repo, const std::string& ref) {
  HttpRequest r{"GET", "/v2/" + repo + "/manifests/" + ref, {kManifestAccept}};
  r.max_body = kMaxMetadataBytes;
  HttpResponse resp = impl_->send_retry(r, repo, Access::kPull);
  if (resp.status != 200) throw impl_->fail("GET manifest " + repo + ":" + ref, resp);
  Manifest m{resp.body, resp.header("content-type")};
  if (auto semi = m.media_type.find(';'); semi != std::string::npos) m.media_type.resize(semi);
  if (m.media_type.empty() || m.media_type == "application/json") m.media_type = m.json().value("mediaType", "");
  std::string want = is_sha256_digest(ref) ? ref : resp.header("docker-content-digest");
  if (!want.empty() && m.digest() != want)
    throw Error("registry " + host() + " served manifest " + repo + ":" + ref + " hashing to " + m.digest() +
                ", expected " + want + " (corrupted or tampered answer)");
  return m;
}

std::string Registry::resolve(const std::string& repo, const std::string& tag) {
  auto mi = head_manifest(repo, tag);
  if (!mi) throw RegistryError(repo + ":" + tag + " not found on " + host(), false, 404, "MANIFEST_UNKNOWN");
  return mi->digest;
}

std::string Registry::put_manifest(const std::string& repo, const std::string& ref, const std::string& raw,
                                   const std::string& media_type) {
  HttpRequest r{"PUT", "/v2/" + repo + "/manifests/" + ref, {"Content-Type: " + media_type}, raw};
  HttpResponse resp = impl_->send_retry(r, repo, Access::kPush);
  if (resp.status != 201 && resp.status != 200) throw impl_->fail("PUT manifest " + repo + ":" + ref, resp);
  std::string d = sha256_digest(raw);
  if (auto got = resp.header("docker-content-digest"); !got.empty() && got != d)
    throw Error("registry " + host() + " stored manifest " + repo + ":" + ref + " as " + got + ", expected " + d);
  return d;
}

void Registry::delete_manifest(const std::string& repo, const std::string& digest) {
  HttpResponse resp = impl_->send_retry({"DELETE", "/v2/" + repo + "/manifests/" + digest}, repo, Access::kDelete);
  if (resp.status != 202 && resp.status != 200 && resp.status != 404)
    throw impl_->fail("DELETE manifest " + repo + "@" + digest, resp);
}

std::vector<std::string> Registry::list_tags(const std::string& repo) {
  std::vector<std::string> tags;
  std::set<std::string> followed;
  std::string url = resolve_url(base_url(), "/v2/" + repo + "/tags/list?n=1000");
  for (int page = 1; !url.empty(); ++page) {
    std::string page_of = "tag list of " + repo + ", page " + std::to_string(page), where = page_of + " on " + host();
    if (page > kMaxTagPages)
      throw Error(where + ": more than " + std::to_string(kMaxTagPages) + " pages; refusing to go on");
    if (!followed.insert(url).second)
      throw Error(where + ": the registry sent the same next page twice (" + strings::url_for_message(url) + ")");
    HttpRequest r{"GET", url};
    r.max_body = kMaxMetadataBytes;
    HttpResponse resp = impl_->send_retry(r, repo, Access::kPull);
    if (resp.status == 404 && page == 1) return tags;  // no such repository: no tags
    if (resp.status != 200) throw impl_->fail("GET " + page_of + " (a partial list is never returned)", resp);
    for (auto& t : page_tags(resp.body, where)) tags.push_back(std::move(t));
    if (tags.size() > kMaxTags)
      throw Error(where + ": more than " + std::to_string(kMaxTags) + " tags; refusing to go on");
    // relative (to the page, after any redirect), or absolute (then vetted like any URL the registry sends)
    url = next_page(resp, resp.effective_url.empty() ? url : resp.effective_url);
  }
  return tags;
}

std::vector<Descriptor> Registry::referrers(const std::string& repo, const std::string& digest,
                                            const std::string& artifact_type) {
  std::string url = "/v2/" + repo + "/referrers/" + digest;
  if (!artifact_type.empty()) url += "?artifactType=" + url_escape(artifact_type);
  HttpRequest req{"GET", url, {"Accept: " + std::string(media::kOciIndex)}};
  req.max_body = kMaxMetadataBytes;
  HttpResponse resp = impl_->send_retry(req, repo, Access::kPull);
  std::string body;
  if (resp.status == 200) {
    body = resp.body;
  } else if (resp.status == 404) {  // no referrers API: tag schema "sha256-<hex>"
    std::string tag = "sha256-" + digest.substr(7);
    if (!head_manifest(repo, tag)) return {};
    body = get_manifest(repo, tag).raw;
  } else {
    throw impl_->fail("GET referrers of " + repo + "@" + digest, resp);
  }
  auto j = parse_json_or_discarded(body);
  std::vector<Descriptor> out;
  if (!j.is_object() || !j.contains("manifests")) return out;
  for (auto& m : j["manifests"]) {
    if (!artifact_type.empty() && m.value("artifactType", "") != artifact_type) continue;
    out.push_back(m.get<Descriptor>());
  }
  return out;
}

std::optional<int64_t> Registry::head_blob(const std::string& repo, const std::string& digest) {
  HttpResponse resp = impl_->send_retry({"HEAD", "/v2/" + repo + "/blobs/" + digest}, repo, Access::kPull);
  if (resp.status == 404) return std::nullopt;
  if (resp.status != 200) throw impl_->fail("HEAD blob " + repo + "@" + digest, resp);
  auto cl = resp.header("content-length");
  return cl.empty() ? 0 : parse_size(cl, "HEAD blob " + repo + "@" + digest);
}

bool Registry::mount_blob(const std::string& repo, const std::string& digest, const std::string& from_repo) {
  std::string url = "/v2/" + repo + "/blobs/uploads/?mount=" + url_escape(digest) + "&from=" + url_escape(from_repo);
  std::string sc = Impl::scope(repo, Access::kPush) + " " + Impl::scope(from_repo, Access::kPull);
  HttpResponse resp;
  try {
    resp = impl_->send({"POST", url}, sc);
  } catch (const RegistryError& e) {  // no access to the source (or none granted for it): upload instead
    if (e.status == 401 || e.status == 403) return false;
    throw;
  }
  if (resp.status == 201) return true;
  if (resp.status == 202) impl_->cancel_upload(resp.header("location"), repo);
  return false;
}

namespace {

// Reads at most `limit` bytes of another reader (one PATCH chunk).
class LimitReader : public BlobReader {
 public:
  LimitReader(BlobReader& in, int64_t limit) : in_(in), left_(limit) {}
  size_t read(char* buf, size_t len) override {
    size_t n = in_.read(buf, static_cast<size_t>(std::min<int64_t>(left_, static_cast<int64_t>(len))));
    left_ -= static_cast<int64_t>(n);
    return n;
  }

 private:
  BlobReader& in_;
  int64_t left_;
};

}  // namespace

void Registry::put_blob(const std::string& repo, const Descriptor& d, BlobReader& content) {
  std::string what = "upload of " + d.digest + " to " + repo;
  HttpResponse start = impl_->send({"POST", "/v2/" + repo + "/blobs/uploads/"}, repo, Access::kPush);
  if (start.status != 202) throw impl_->fail("start " + what, start);
  std::string loc = RegistryTransport::absolute(base_url(), start.header("location"));
  if (impl_->opt.chunked_upload) {
    for (int64_t off = 0; off < d.size; off += impl_->opt.chunk_size) {
      int64_t n = std::min(impl_->opt.chunk_size, d.size - off);
      LimitReader part(content, n);
      HttpRequest p{"PATCH",
                    loc,
                    {"Content-Type: application/octet-stream",
                     "Content-Range: " + std::to_string(off) + "-" + std::to_string(off + n - 1)}};
      p.upload = &part;
      p.upload_size = n;
      p.timeout = impl_->opt.blob_timeout;
      HttpResponse pr = impl_->send(p, repo, Access::kPush);
      if (pr.status != 202) throw impl_->fail("PATCH chunk of " + what, pr);
      loc = RegistryTransport::absolute(base_url(), pr.header("location"));
    }
    HttpResponse fin =
        impl_->send({"PUT", RegistryTransport::with_query(loc, "digest=" + url_escape(d.digest))}, repo, Access::kPush);
    if (fin.status != 201) throw impl_->fail("finish " + what, fin);
    return;
  }
  HttpRequest put{"PUT",
                  RegistryTransport::with_query(loc, "digest=" + url_escape(d.digest)),
                  {"Content-Type: application/octet-stream"}};
  put.upload = &content;
  put.upload_size = d.size;
  put.timeout = impl_->opt.blob_timeout;
  HttpResponse resp = impl_->send(put, repo, Access::kPush);
  if (resp.status != 201) throw impl_->fail(what, resp);
}

Descriptor Registry::put_blob_stream(const std::string& repo, StreamingBlob& content) {
  std::string what = "streamed upload to " + repo;
  HttpResponse start = impl_->send({"POST", "/v2/" + repo + "/blobs/uploads/"}, repo, Access::kPush);
  if (start.status != 202) throw impl_->fail("start " + what, start);
  std::string loc = RegistryTransport::absolute(base_url(), start.header("location"));
  HttpRequest p{"PATCH", loc, {"Content-Type: application/octet-stream", "Transfer-Encoding: chunked"}};
  p.upload = &content;
  p.upload_size = -1;  // unknown: libcurl sends the body chunked as read() yields it
  p.timeout = impl_->opt.blob_timeout;
  HttpResponse pr = impl_->send(p, repo, Access::kPush);
  if (pr.status != 202) throw impl_->fail("PATCH (streamed) of " + what, pr);
  auto d = content.descriptor();
  if (!d) throw Error(what + ": the stream ended without a digest");
  trace("blob " + d->digest.substr(7, 12) + ": PATCH done, PUT ?digest=");
  what = "upload of " + d->digest + " to " + repo;
  if (auto next = pr.header("location"); !next.empty()) loc = RegistryTransport::absolute(base_url(), next);
  HttpResponse fin =
      impl_->send({"PUT", RegistryTransport::with_query(loc, "digest=" + url_escape(d->digest))}, repo, Access::kPush);
  if (fin.status != 201) throw impl_->fail("finish " + what, fin);
  if (auto got = fin.header("docker-content-digest"); !got.empty() && got != d->digest)
    throw Error("registry " + host() + " stored " + got + " for " + what);
  return *d;
}

Descriptor Registry::put_blob(const std::string& repo, const std::string& bytes, const std::string& media_type) {
  Descriptor d{media_type, sha256_digest(bytes), static_cast<int64_t>(bytes.size())};
  if (head_blob(repo, d.digest)) return d;
  StringReader r(bytes);
  put_blob(repo, d, r);
  return d;
}

std::unique_ptr<BlobReader> Registry::get_blob(const std::string& repo, const Descriptor& d) {
  check_descriptor(d, "docker://" + host() + "/" + repo);
  auto producer = [this, repo, d](PipeReader& pipe) {
    HttpRequest r{"GET", "/v2/" + repo + "/blobs/" + d.digest};
    r.timeout = impl_->opt.blob_timeout;
    bool started = false;
    r.on_data = [&](const char* p, size_t n) {
      started = true;
      return pipe.push(p, n);
    };
    auto delay = impl_->opt.backoff;
    for (int attempt = 1;; ++attempt) {
      try {
        HttpResponse resp = impl_->send(r, repo, Access::kPull);
        if (resp.status == 200) return;
        auto err = impl_->fail("GET blob " + repo + "@" + d.digest, resp);
        if (!err.retryable || attempt >= impl_->opt.attempts) throw err;
      } catch (const HttpTransportError& e) {
        if (started || !e.retryable || attempt >= impl_->opt.attempts) throw;
      }
      std::this_thread::sleep_for(delay);
      delay *= 2;
    }
  };
  return std::make_unique<VerifyingReader>(std::make_unique<ThreadedReader>(producer), d,
                                           "docker://" + host() + "/" + repo);
}

std::string Registry::get_blob_bytes(const std::string& repo, const Descriptor& d) {
  check_descriptor(d, "docker://" + host() + "/" + repo);
  if (d.size > static_cast<int64_t>(kMaxMetadataBytes))
    throw Error("docker://" + host() + "/" + repo + ": blob " + d.digest + " claims " + std::to_string(d.size) +
                " bytes, more than the " + std::to_string(kMaxMetadataBytes) +
                "-byte limit for configs and signature payloads");
  auto r = get_blob(repo, d);
  return read_all(*r);
}

}  // namespace imgtool::image
