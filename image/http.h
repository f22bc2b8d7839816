// A small blocking HTTP client over libcurl, the only place imgtool talks HTTP.
//
// Contract
//   - send() returns any HTTP answer (including 4xx/5xx); it throws
//     HttpTransportError only when no answer came (connect, TLS, reset),
//     with `retryable` set for failures a retry may cure (not TLS verification).
//   - TLS peers are verified (system CAs, or HttpOptions::ca_file).
//   - A streamed upload sets Content-Length (CURLOPT_INFILESIZE_LARGE), so no
//     chunked Transfer-Encoding is sent.
//   - Easy handles are pooled, so keep-alive connections are reused; send() is
//     safe to call from several threads at once.
//   - Protocols: https only, unless HttpOptions::allow_http (or a Unix socket).
//     Redirects are followed for GET/HEAD only and never from https to http;
//     libcurl itself never sends a caller's Authorization header to another
//     scheme, host or port on a redirect (CURLOPT_UNRESTRICTED_AUTH stays off).
//   - Bounded: a body kept in HttpResponse::body (every answer without on_data,
//     and error answers with it) may be at most HttpRequest::max_body bytes; past
//     that the transfer is aborted and HttpTransportError (not retryable) thrown.
//     Each request has a total deadline (HttpOptions::timeout, or the request's).
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "image/image.h"

namespace imgtool::image {

// Body caps: registry metadata (manifests, indexes, configs, signature
// payloads, tag lists) and small answers (tokens, error bodies).
inline constexpr size_t kMaxMetadataBytes = kMaxSmallBlobBytes;  // image.h: 4 MiB
inline constexpr size_t kMaxSmallBodyBytes = 64u << 10;

struct HttpOptions {
  std::string ca_file;      // extra CA bundle (PEM); empty = system default
  std::string unix_socket;  // talk to a Unix socket (the Docker Engine API; http allowed)
  bool allow_http = false;  // plain http allowed at all (https always is)
  long connect_timeout_s = 20;
  long low_speed_bytes = 1;              // abort if < low_speed_bytes/s ...
  long low_speed_timeout_s = 60;         // ... for this long
  std::chrono::milliseconds timeout{0};  // total deadline per request; 0 = none
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // small request body (PUT/POST)
  BlobReader* upload = nullptr;      // or a streamed body of upload_size bytes
  int64_t upload_size = -1;
  // If set, a 2xx response body is streamed here instead of kept in
  // HttpResponse::body; return false to abort the transfer.
  std::function<bool(const char*, size_t)> on_data;
  size_t max_body = kMaxSmallBodyBytes;   // cap on a body kept in HttpResponse::body
  std::chrono::milliseconds timeout{-1};  // total deadline; -1 = HttpOptions::timeout, 0 = none
  // GET/HEAD: libcurl follows redirects (never https -> http). false: a 3xx comes back as the
  // answer, for a caller that vets each hop itself (the registry client: image/registry.cc).
  bool follow_redirects = true;
};

struct HttpResponse {
  long status = 0;
  // lower-case names; a repeated field: the last value wins, except for list fields
  // (Link, WWW-Authenticate), whose lines are joined with ", " as RFC 9110 §5.3 allows
  std::map<std::string, std::string> headers;
  std::string body;
  std::string effective_url;
  std::string header(const std::string& lower_name) const;
};

struct HttpTransportError : Error {
  HttpTransportError(const std::string& what, bool retryable, int curl_code, std::string detail = "")
      : Error(what, retryable), curl_code(curl_code), detail(std::move(detail)) {}
  int curl_code;
  std::string detail;             // libcurl's own error text (its error buffer)
  bool tls_verification() const;  // certificate not trusted / wrong host name
  // The server answered our TLS ClientHello with plain HTTP — proof the port speaks only http:
  // a TLS connect error whose text is OpenSSL's "wrong version number" (it read "HTTP/1.1 …" as
  // a record header) or "http request". A reset, an alert, a timeout or a certificate failure is
  // NOT such proof (an attacker can cause those), so it is false for them.
  bool not_tls() const;
};

class HttpClient {
 public:
  explicit HttpClient(HttpOptions o = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;
  HttpResponse send(const HttpRequest& r);

 private:
  void* acquire();
  void release(void* h);
  HttpOptions opt_;
  std::mutex mu_;
  std::vector<void*> idle_;
};

// "scheme://host:port" of an absolute http(s) URL, lower-case, with the
// default port made explicit ("https://r.io" -> "https://r.io:443"), so two
// spellings of one origin compare equal. Throws Error for anything else.
struct UrlOrigin {
  std::string scheme;  // "http" or "https"
  std::string host;    // without brackets for IPv6 literals
  int port = 0;
  std::string str() const;
  std::string host_port() const;  // "host:port" ("[::1]:5000" for IPv6)
};
UrlOrigin url_origin(const std::string& url);

// `ref` (absolute, or a relative reference such as "/v2/x?last=a" or "uploads/1") resolved against
// the absolute URL `base` per RFC 3986 (libcurl's URL parser). Throws Error when it cannot be.
std::string resolve_url(const std::string& base, const std::string& ref);

// Percent-encodes a URL query value.
std::string url_escape(const std::string& s);

}  // namespace imgtool::image
