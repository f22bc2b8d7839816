#include "image/registry_transport.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/json_file.h"
#include "core/strings.h"

namespace imgtool::image {

using registry_detail::Authorizer;

namespace {

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

std::string RegistryTransport::absolute(const std::string& base, const std::string& location) {
  if (location.empty()) throw Error("registry " + base + " started an upload without a Location to send it to");
  return resolve_url(base, location);
}

std::string RegistryTransport::with_query(const std::string& url, const std::string& kv) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + kv;
}

RegistryTransport::RegistryTransport(std::string h, RegistryOptions o)
    : host(std::move(h)), opt(std::move(o)), http(http_options(host, opt)) {}

HttpOptions RegistryTransport::http_options(const std::string& host, const RegistryOptions& o) {
  HttpOptions h;
  h.ca_file = o.ca_file;
  h.allow_http = o.insecure_http || is_loopback_host(host);
  h.timeout = o.request_timeout;
  return h;
}

std::string RegistryTransport::scope(const std::string& repo, Access a) {
  static const std::map<Access, const char*> kActions = {
      {Access::kPull, ":pull"}, {Access::kPush, ":pull,push"}, {Access::kDelete, ":delete"}};
  return repo.empty() ? "" : "repository:" + repo + kActions.at(a);
}

Authorizer* RegistryTransport::authorizer(const UrlOrigin& o) {
  pick_base();
  return o.str() == own.origin.str() ? &own : nullptr;
}

const std::optional<Credentials>& RegistryTransport::credentials(Authorizer& au) {
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

std::string RegistryTransport::auth_header(Authorizer& au, const std::string& sc) {
  std::lock_guard lk(mu);
  if (auto it = au.tokens.find(sc); it != au.tokens.end()) return "Authorization: Bearer " + it->second;
  return au.basic.empty() ? "" : "Authorization: " + au.basic;
}

std::string RegistryTransport::pick_base() {
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

bool RegistryTransport::base_is_https() { return pick_base().rfind("https://", 0) == 0; }

UrlOrigin RegistryTransport::check_target(const std::string& url, const std::string& what) {
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

std::string RegistryTransport::probe_scheme() {
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

HttpResponse RegistryTransport::send_once(HttpRequest r, Authorizer* au, const std::string& sc) {
  if (!au) return http.send(r);
  if (auto a = auth_header(*au, sc); !a.empty()) r.headers.push_back(a);
  return http.send(r);
}

RegistryError RegistryTransport::foreign_401(const HttpRequest& r, const UrlOrigin& o) {
  return RegistryError(r.method + " " + strings::url_for_message(r.url) + ": " + o.host_port() +
                           " answered 401 (authentication required); "
                           "imgtool sends credentials only to the registry's own origin " +
                           own.origin.str() +
                           ", never to a URL it points elsewhere (upload Location, Link, redirect); fix: have " + host +
                           " serve that URL itself, or without authentication",
                       false, 401, "UNAUTHORIZED");
}

HttpResponse RegistryTransport::send(HttpRequest r, const std::string& sc) {
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

HttpResponse RegistryTransport::send(const HttpRequest& r, const std::string& repo, Access a) {
  return send(r, scope(repo, a));
}

HttpResponse RegistryTransport::send_retry(const HttpRequest& r, const std::string& repo, Access a) {
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

RegistryError RegistryTransport::auth_failed(Authorizer& au, const HttpResponse& resp) {
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

void RegistryTransport::authenticate(Authorizer& au, const HttpResponse& resp, const std::string& sc) {
  auto challenges = parse_challenges(resp.header("www-authenticate"));
  for (auto& c : challenges) {
    if (c.scheme == "bearer") return fetch_token(au, c, sc);
    if (c.scheme == "basic") return use_basic(au, resp);
  }
  throw auth_failed(au, resp);
}

void RegistryTransport::use_basic(Authorizer& au, const HttpResponse& resp) {
  auto& c = credentials(au);
  if (!c || c->username.empty()) throw auth_failed(au, resp);
  std::lock_guard lk(mu);
  au.basic = "Basic " + base64_encode(c->username + ":" + c->password);
}

HttpRequest RegistryTransport::token_request(const std::string& realm, const Challenge& c,
                                             const std::vector<std::string>& want,
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

void RegistryTransport::fetch_token(Authorizer& au, const Challenge& c, const std::string& sc) {
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
    throw Error("token request to " + realm + " failed: HTTP " + std::to_string(t.status), retryable_status(t.status));
  auto j = parse_json_or_discarded(t.body);
  std::string tok;
  for (const char* k : {"token", "access_token"})
    if (tok.empty() && j.is_object() && j.contains(k) && j[k].is_string()) tok = j[k].get<std::string>();
  if (tok.empty()) throw Error("token response from " + realm + " carries no token");
  std::lock_guard lk(mu);
  au.tokens[sc] = tok;
}

void RegistryTransport::cancel_upload(const std::string& location, const std::string& repo) {
  try {
    std::string url = absolute(pick_base(), location);
    if (url_origin(url).str() != own.origin.str()) return;
    send({"DELETE", url}, repo, Access::kPush);  // an upload session is the pusher's
  } catch (const Error&) {
  }
}

RegistryError RegistryTransport::fail(const std::string& what, const HttpResponse& resp) {
  std::string msg;
  std::string code = registry_error_code(resp.body, &msg);
  std::string detail =
      "HTTP " + std::to_string(resp.status) + (code.empty() ? "" : " " + code) + (msg.empty() ? "" : ": " + msg);
  return RegistryError(what + " on " + host + ": " + detail, retryable_status(resp.status), resp.status, code);
}

}  // namespace imgtool::image
