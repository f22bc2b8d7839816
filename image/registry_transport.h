// The transport under the registry client (image/registry.h), along go-containerregistry's seam
// (pkg/v1/remote/transport): which scheme a host speaks (the /v2/ probe, once), which origins
// may get its credentials and where a URL it sends may lead, the auth challenges (Basic, the
// Bearer token flow), redirects vetted hop by hop, and retries of idempotent requests. The
// distribution API (manifests, blobs, tags, referrers) is image/registry.cc, on top of it; every
// contract listed in registry.h's header that is about connections, origins or auth lives here.
#pragma once
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "image/auth.h"
#include "image/http.h"
#include "image/registry.h"

namespace imgtool::image {

// What a request needs of its repository, as the token spec's scope actions (docker-registry asks
// for `delete` on a manifest DELETE, not `push`).
enum class Access { kPull, kPush, kDelete };

namespace registry_detail {

// The registry's credentials and what its challenges yielded. As containerd's pusher does,
// they go only to requests on the registry's own origin (scheme, host and port of its base)
// and to the token realm its own Bearer challenge names. A URL the registry points elsewhere
// (upload Location, Link, redirect) is fetched with no credentials at all — not even that
// origin's own from the Docker config, or a hostile registry could make imgtool act with them
// (a DELETE on another registry) — and a 401 from it is an error, never answered.
struct Authorizer {
  UrlOrigin origin;  // the registry's own, once its scheme is known
  std::optional<Credentials> creds;
  std::string creds_source;
  bool looked_up = false;
  std::string basic;                          // "Basic ..." once a Basic challenge was seen
  std::map<std::string, std::string> tokens;  // scope -> bearer token
};

}  // namespace registry_detail

class RegistryTransport {
 public:
  RegistryTransport(std::string host, RegistryOptions opt);

  const std::string host;
  const RegistryOptions opt;

  // scheme://host, probed once (probe_scheme) and kept.
  std::string pick_base();
  // Sends r (a reference resolved against the base: the registry's own paths, and Locations and
  // Links it sent, relative or absolute). On the registry's own origin one 401 challenge is
  // answered with its credentials; any other origin gets none, and its 401 throws. Redirects of
  // GET/HEAD are followed here, not by libcurl, so that every hop is vetted by check_target (http
  // only where allowed, never after https) and authorized by the same rule; at most 5.
  // `sc`: the scopes a token for it must carry, space-separated; also the key its token is kept under.
  HttpResponse send(HttpRequest r, const std::string& sc);
  HttpResponse send(const HttpRequest& r, const std::string& repo, Access a);
  // Like send(), retried with backoff on 429/5xx/resets (idempotent requests only).
  HttpResponse send_retry(const HttpRequest& r, const std::string& repo, Access a);
  // Cancels the upload session a refused mount started (a DELETE of its Location: hygiene, the
  // session would expire anyway) — only on the registry's own origin: a DELETE is never sent to
  // a URL the registry points elsewhere, which could name anything (another registry's manifest).
  void cancel_upload(const std::string& location, const std::string& repo);
  RegistryError fail(const std::string& what, const HttpResponse& resp);

  // "repository:<repo>:<actions>" ("" for no repository: the /v2/ ping).
  static std::string scope(const std::string& repo, Access a);
  // A Location the registry sent, resolved against its base (RFC 3986: "@evil/x" is a path there,
  // not another host).
  static std::string absolute(const std::string& base, const std::string& location);
  static std::string with_query(const std::string& url, const std::string& kv);

 private:
  HttpClient http;
  std::mutex mu;
  std::string base;                 // scheme://host once pinged
  registry_detail::Authorizer own;  // the registry's own origin (origin set with base)

  using Authorizer = registry_detail::Authorizer;
  static HttpOptions http_options(const std::string& host, const RegistryOptions& o);
  // The authorizer for a request to `o`: the registry's own for its own origin, none elsewhere.
  Authorizer* authorizer(const UrlOrigin& o);
  // The registry's credentials: the given ones, else the Docker config's for its host.
  const std::optional<Credentials>& credentials(Authorizer& au);
  std::string auth_header(Authorizer& au, const std::string& sc);
  bool base_is_https();
  // Where a URL the registry handed us (upload Location, pagination Link,
  // token realm) may lead: http(s) only, never plain http once the registry
  // spoke https, and plain http elsewhere only for loopback or insecure_http.
  UrlOrigin check_target(const std::string& url, const std::string& what);
  // Loopback: plain http first (no TLS set-up cost); a TLS port answers a
  // plain request with 400 "Client sent an HTTP request to an HTTPS server",
  // and then https (verified) is used. Elsewhere: https, and http only with
  // insecure_http when the port answered the TLS handshake with plain HTTP
  // (HttpTransportError::not_tls) — never after a reset, an alert, a timeout
  // or a certificate failure, which a man in the middle can cause at will.
  std::string probe_scheme();
  HttpResponse send_once(HttpRequest r, Authorizer* au, const std::string& sc);
  // A 401 from an origin the registry sent us to: never answered (see Authorizer).
  RegistryError foreign_401(const HttpRequest& r, const UrlOrigin& o);
  RegistryError auth_failed(Authorizer& au, const HttpResponse& resp);
  void authenticate(Authorizer& au, const HttpResponse& resp, const std::string& sc);
  void use_basic(Authorizer& au, const HttpResponse& resp);
  // The token request of the distribution token spec: with an identity
  // (refresh) token, the OAuth2 form POST (grant_type=refresh_token, scopes
  // space-separated in one field); else a GET (one scope= parameter per scope)
  // with Basic credentials, or anonymous.
  HttpRequest token_request(const std::string& realm, const Challenge& c, const std::vector<std::string>& want,
                            const std::optional<Credentials>& cr);
  void fetch_token(Authorizer& au, const Challenge& c, const std::string& sc);
};

}  // namespace imgtool::image
