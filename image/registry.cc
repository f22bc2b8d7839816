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
#include "image/trace.h"

namespace imgtool::image {

const char* const kManifestAccept =
    "Accept: application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, "
    "application/vnd.docker.distribution.manifest.v2+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json";

namespace {

// What a request needs of its repository, as the token spec's scope actions (docker-registry asks
// for `delete` on a manifest DELETE, not `push`).
enum class Access { kPull, kPush, kDelete };

std::string registry_error_code(const std::string& body, std::string* message) {
  auto j = parse_json_or_discarded(body);
  if (j.is_discarded() || !j.is_object() || !j.contains("errors") || !j["errors"].is_array() || j["errors"].empty())
    return "";
  auto& e = j["errors"][0];
  if (message && e.contains("message") && e["message"].is_string())
    *message = strings::printable(e["message"].get<std::string>());
  return e.contains("code") && e["code"].is_string() ? strings::printable(e["code"].get<std::string>()) : "";
}

bool retryable_status(long s) { return s == 429 || s == 408 || (s >= 500 && s <= 599); }

// A Location the registry sent, resolved against its base (RFC 3986: "@evil/x" is a path there,
// not another host).
std::string absolute(const std::string& base, const std::string& location) {
  if (location.empty()) throw Error("registry " + base + " started an upload without a Location to send it to");
  return resolve_url(base, location);
}

std::string with_query(const std::string& url, const std::string& kv) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + kv;
}

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

bool is_loopback_host(const std::string& host) {
  std::string h = host;
  if (h.size() > 1 && h.front() == '[') {  // "[::1]" or "[::1]:5000"
    h = h.substr(1, h.find(']') == std::string::npos ? std::string::npos : h.find(']') - 1);
  } else if (auto c = h.rfind(':'); c != std::string::npos && h.find(':') == c) {
    h = h.substr(0, c);  // "host:port" (one colon; more is a bare IPv6 literal)
  }
  if (h == "localhost") return true;
  unsigned char a[16];
  if (inet_pton(AF_INET, h.c_str(), a) == 1) return a[0] == 127;  // 127.0.0.0/8 literals only
  return inet_pton(AF_INET6, h.c_str(), a) == 1 && IN6_IS_ADDR_LOOPBACK(reinterpret_cast<in6_addr*>(a));
}

namespace registry_detail {  // named: Registry::Impl holds it (no -Wsubobject-linkage)

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
using registry_detail::Authorizer;

namespace {

std::string form_field(const std::string& k, const std::string& v) { return k + "=" + url_escape(v); }

// The scopes a token is asked for: the challenge's (what the registry says this request needs,
// e.g. `delete`, or `pull` on a mount's source repository) and the request's own, each once, in
// that order. Both are space-separated lists.
std::vector<std::string> scope_union(const std::string& challenged, const std::string& own) {
  std::vector<std::string> out;
  for (const std::string& list : {challenged, own})
    for (size_t i = 0; i < list.size();) {
      size_t e = std::min(list.find(' ', i), list.size());
      std::string one = list.substr(i, e - i);
      if (!one.empty() && std::find(out.begin(), out.end(), one) == out.end()) out.push_back(one);
      i = e + 1;
    }
  return out;
}

}  // namespace

struct Registry::Impl {
  std::string host;
  RegistryOptions opt;
  HttpClient http;
  std::mutex mu;
  std::string base;  // scheme://host once pinged
  Authorizer own;    // the registry's own origin (origin set with base)

  static HttpOptions http_options(const std::string& host, const RegistryOptions& o) {
    HttpOptions h;
    h.ca_file = o.ca_file;
    h.allow_http = o.insecure_http || is_loopback_host(host);
    h.timeout = o.request_timeout;
    return h;
  }

  Impl(std::string h, RegistryOptions o) : host(std::move(h)), opt(std::move(o)), http(http_options(host, opt)) {}

  // "repository:<repo>:<actions>" ("" for no repository: the /v2/ ping).
  static std::string scope(const std::string& repo, Access a) {
    static const std::map<Access, const char*> kActions = {
        {Access::kPull, ":pull"}, {Access::kPush, ":pull,push"}, {Access::kDelete, ":delete"}};
    return repo.empty() ? "" : "repository:" + repo + kActions.at(a);
  }

  // The authorizer for a request to `o`: the registry's own for its own origin, none elsewhere.
  Authorizer* authorizer(const UrlOrigin& o) {
    pick_base();
    return o.str() == own.origin.str() ? &own : nullptr;
  }

  // The registry's credentials: the given ones, else the Docker config's for its host.
  const std::optional<Credentials>& credentials(Authorizer& au) {
    std::lock_guard lk(mu);
    if (!au.looked_up) {
      au.looked_up = true;
      if (opt.credentials) {
        au.creds = opt.credentials;
        au.creds_source = "the given credentials";
      } else {
        auto l = find_credentials(host);
        au.creds = l.creds;
        au.creds_source = l.source;
      }
    }
    return au.creds;
  }

  std::string auth_header(Authorizer& au, const std::string& sc) {
    std::lock_guard lk(mu);
    if (auto it = au.tokens.find(sc); it != au.tokens.end()) return "Authorization: Bearer " + it->second;
    return au.basic.empty() ? "" : "Authorization: " + au.basic;
  }

  std::string pick_base() {
    {
      std::lock_guard lk(mu);
      if (!base.empty()) return base;
    }
    std::string b = probe_scheme();
    UrlOrigin o = url_origin(b);
    std::lock_guard lk(mu);
    if (base.empty()) base = b, own.origin = o;
    return base;
  }

  bool base_is_https() { return pick_base().rfind("https://", 0) == 0; }

  // Where a URL the registry handed us (upload Location, pagination Link,
  // token realm) may lead: http(s) only, never plain http once the registry
  // spoke https, and plain http elsewhere only for loopback or insecure_http.
  UrlOrigin check_target(const std::string& url, const std::string& what) {
    UrlOrigin o;
    try {
      o = url_origin(url);
    } catch (const Error&) {
      throw Error("registry " + host + " sent " + what + " that is not an http(s) URL: '" +
                  strings::url_for_message(url) + "'");
    }
    if (o.scheme == "http" && base_is_https())
      throw Error("registry " + host + " sent " + what + " on plain http (" + strings::url_for_message(url) +
                  ") although it speaks https; refusing the downgrade");
    if (o.scheme == "http" && !opt.insecure_http && !is_loopback_host(o.host_port()))
      throw Error("registry " + host + " sent " + what + " on plain http to " + o.host_port() + " (" +
                  strings::url_for_message(url) +
                  "); refused (plain http only for loopback hosts or with --insecure-http)");
    return o;
  }

  // Loopback: plain http first (no TLS set-up cost); a TLS port answers a
  // plain request with 400 "Client sent an HTTP request to an HTTPS server",
  // and then https (verified) is used. Elsewhere: https, and http only with
  // insecure_http when the port answered the TLS handshake with plain HTTP
  // (HttpTransportError::not_tls) — never after a reset, an alert, a timeout
  // or a certificate failure, which a man in the middle can cause at will.
  std::string probe_scheme() {
    if (is_loopback_host(host)) {
      try {
        HttpResponse r = http.send({"GET", "http://" + host + "/v2/"});
        bool tls_port = r.status == 400 && r.body.find("HTTPS") != std::string::npos;
        if (!tls_port) return "http://" + host;
      } catch (const HttpTransportError& e) {
        if (e.curl_code != 1 /* CURLE_UNSUPPORTED_PROTOCOL */ && e.curl_code != 8 /* WEIRD_SERVER_REPLY */)
          throw Error(std::string("cannot reach registry: ") + e.what(), e.retryable);
      }
    }
    try {
      http.send({"GET", "https://" + host + "/v2/"});
      return "https://" + host;
    } catch (const HttpTransportError& e) {
      if (e.tls_verification())
        throw Error("TLS verification failed for " + host + ": " + e.what() +
                    " (pass --ca-file with the registry's CA certificate)");
      if (!(opt.insecure_http && e.not_tls()))
        throw Error(std::string("cannot reach registry: ") + e.what(), e.retryable);
      return "http://" + host;
    }
  }

  HttpResponse send_once(HttpRequest r, Authorizer* au, const std::string& sc) {
    if (!au) return http.send(r);
    if (auto a = auth_header(*au, sc); !a.empty()) r.headers.push_back(a);
    return http.send(r);
  }

  // A 401 from an origin the registry sent us to: never answered (see Authorizer).
  RegistryError foreign_401(const HttpRequest& r, const UrlOrigin& o) {
    return RegistryError(r.method + " " + strings::url_for_message(r.url) + ": " + o.host_port() +
                             " answered 401 (authentication required); "
                             "imgtool sends credentials only to the registry's own origin " +
                             own.origin.str() +
                             ", never to a URL it points elsewhere (upload Location, Link, redirect); fix: have " +
                             host + " serve that URL itself, or without authentication",
                         false, 401, "UNAUTHORIZED");
  }

  // Sends r (a reference resolved against the base: the registry's own paths, and Locations and
  // Links it sent, relative or absolute). On the registry's own origin one 401 challenge is
  // answered with its credentials; any other origin gets none, and its 401 throws. Redirects of
  // GET/HEAD are followed here, not by libcurl, so that every hop is vetted by check_target (http
  // only where allowed, never after https) and authorized by the same rule; at most 5.
  // `sc`: the scopes a token for it must carry, space-separated; also the key its token is kept under.
  HttpResponse send(HttpRequest r, const std::string& sc) {
    r.url = resolve_url(pick_base(), r.url);
    r.follow_redirects = false;
    for (int hop = 0;; ++hop) {
      UrlOrigin o = check_target(r.url, hop == 0 ? "a URL" : "a redirect");
      Authorizer* au = authorizer(o);
      HttpResponse resp = send_once(r, au, sc);
      if (resp.status == 401 && !au) throw foreign_401(r, o);
      if (resp.status == 401 && !r.upload) {
        authenticate(*au, resp, sc);
        resp = send_once(r, au, sc);
        if (resp.status == 401) throw auth_failed(*au, resp);
      }
      bool redirect =
          resp.status == 301 || resp.status == 302 || resp.status == 303 || resp.status == 307 || resp.status == 308;
      std::string loc = resp.header("location");
      if (!redirect || loc.empty() || (r.method != "GET" && r.method != "HEAD")) return resp;
      if (hop == 5)
        throw Error("registry " + host + ": more than 5 redirects, the last to " + strings::url_for_message(loc));
      r.url = resolve_url(r.url, loc);
    }
  }

  HttpResponse send(const HttpRequest& r, const std::string& repo, Access a) { return send(r, scope(repo, a)); }

  // Like send(), retried with backoff on 429/5xx/resets (idempotent requests only).
  HttpResponse send_retry(const HttpRequest& r, const std::string& repo, Access a) {
    auto delay = opt.backoff;
    for (int attempt = 1;; ++attempt) {
      try {
        HttpResponse resp = send(r, repo, a);
        if (!retryable_status(resp.status) || attempt >= opt.attempts) return resp;
      } catch (const Error& e) {
        if (!e.retryable || attempt >= opt.attempts) throw;
      }
      std::this_thread::sleep_for(delay);
      delay *= 2;
    }
  }

  RegistryError auth_failed(Authorizer& au, const HttpResponse& resp) {
    std::string msg;
    std::string code = registry_error_code(resp.body, &msg);
    auto& creds = credentials(au);
    const std::string& who = host;
    std::string how = creds ? "with credentials from " + au.creds_source + "; check the user name and password"
                            : "anonymously; no credentials found (docker login " + who + ", or a Docker config entry)";
    return RegistryError("authentication failed for " + who + " (" + (code.empty() ? "401" : code) +
                             (msg.empty() ? "" : ": " + msg) + ") " + how,
                         false, 401, code.empty() ? "UNAUTHORIZED" : code);
  }

  void authenticate(Authorizer& au, const HttpResponse& resp, const std::string& sc) {
    auto challenges = parse_challenges(resp.header("www-authenticate"));
    for (auto& c : challenges) {
      if (c.scheme == "bearer") return fetch_token(au, c, sc);
      if (c.scheme == "basic") return use_basic(au, resp);
    }
    throw auth_failed(au, resp);
  }

  void use_basic(Authorizer& au, const HttpResponse& resp) {
    auto& c = credentials(au);
    if (!c || c->username.empty()) throw auth_failed(au, resp);
    std::lock_guard lk(mu);
    au.basic = "Basic " + base64_encode(c->username + ":" + c->password);
  }

  // The token request of the distribution token spec: with an identity
  // (refresh) token, the OAuth2 form POST (grant_type=refresh_token, scopes
  // space-separated in one field); else a GET (one scope= parameter per scope)
  // with Basic credentials, or anonymous.
  HttpRequest token_request(const std::string& realm, const Challenge& c, const std::vector<std::string>& want,
                            const std::optional<Credentials>& cr) {
    std::string service = c.params.count("service") ? c.params.at("service") : "";
    if (cr && !cr->identity_token.empty()) {
      std::string form = form_field("grant_type", "refresh_token") + "&" +
                         form_field("refresh_token", cr->identity_token) + "&" + form_field("client_id", "imgtool");
      if (!service.empty()) form += "&" + form_field("service", service);
      if (!want.empty()) form += "&" + form_field("scope", strings::join(want, " "));
      return HttpRequest{"POST", realm, {"Content-Type: application/x-www-form-urlencoded"}, form};
    }
    std::string url = realm;
    if (!service.empty()) url = with_query(url, form_field("service", service));
    for (const auto& w : want) url = with_query(url, form_field("scope", w));
    HttpRequest tr{"GET", url};
    if (cr && !cr->username.empty())
      tr.headers.push_back("Authorization: Basic " + base64_encode(cr->username + ":" + cr->password));
    return tr;
  }

  void fetch_token(Authorizer& au, const Challenge& c, const std::string& sc) {
    std::string realm = c.params.count("realm") ? c.params.at("realm") : "";
    if (realm.empty()) throw Error("registry " + host + " sent a Bearer challenge without a realm");
    if (au.origin.scheme == "https" && realm.rfind("https://", 0) != 0)
      throw Error("registry " + host + " asks for a token from a non-https realm " + realm +
                  "; refusing to send credentials");
    check_target(realm, "a token realm");
    std::string challenged = c.params.count("scope") ? c.params.at("scope") : "";
    HttpResponse t = http.send(token_request(realm, c, scope_union(challenged, sc), credentials(au)));
    if (t.status == 401 || t.status == 403) throw auth_failed(au, t);
    if (t.status != 200)
      throw Error("token request to " + realm + " failed: HTTP " + std::to_string(t.status),
                  retryable_status(t.status));
    auto j = parse_json_or_discarded(t.body);
    std::string tok;
    for (const char* k : {"token", "access_token"})
      if (tok.empty() && j.is_object() && j.contains(k) && j[k].is_string()) tok = j[k].get<std::string>();
    if (tok.empty()) throw Error("token response from " + realm + " carries no token");
    std::lock_guard lk(mu);
    au.tokens[sc] = tok;
  }

  // Cancels the upload session a refused mount started (a DELETE of its Location: hygiene, the
  // session would expire anyway) — only on the registry's own origin: a DELETE is never sent to
  // a URL the registry points elsewhere, which could name anything (another registry's manifest).
  void cancel_upload(const std::string& location, const std::string& repo) {
    try {
      std::string url = absolute(pick_base(), location);
      if (url_origin(url).str() != own.origin.str()) return;
      send({"DELETE", url}, repo, Access::kPush);  // an upload session is the pusher's
    } catch (const Error&) {
    }
  }

  RegistryError fail(const std::string& what, const HttpResponse& resp) {
    std::string msg;
    std::string code = registry_error_code(resp.body, &msg);
    std::string detail =
        "HTTP " + std::to_string(resp.status) + (code.empty() ? "" : " " + code) + (msg.empty() ? "" : ": " + msg);
    return RegistryError(what + " on " + host + ": " + detail, retryable_status(resp.status), resp.status, code);
  }
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
  std::string loc = absolute(base_url(), start.header("location"));
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
      loc = absolute(base_url(), pr.header("location"));
    }
    HttpResponse fin = impl_->send({"PUT", with_query(loc, "digest=" + url_escape(d.digest))}, repo, Access::kPush);
    if (fin.status != 201) throw impl_->fail("finish " + what, fin);
    return;
  }
  HttpRequest put{"PUT", with_query(loc, "digest=" + url_escape(d.digest)), {"Content-Type: application/octet-stream"}};
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
  std::string loc = absolute(base_url(), start.header("location"));
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
  if (auto next = pr.header("location"); !next.empty()) loc = absolute(base_url(), next);
  HttpResponse fin = impl_->send({"PUT", with_query(loc, "digest=" + url_escape(d->digest))}, repo, Access::kPush);
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
