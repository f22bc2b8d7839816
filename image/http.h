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
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "image/image.h"

namespace imgtool::image {

struct HttpOptions {
  std::string ca_file;      // extra CA bundle (PEM); empty = system default
  std::string unix_socket;  // talk to a Unix socket (the Docker Engine API)
  long connect_timeout_s = 20;
  long low_speed_timeout_s = 60;  // abort if < 1 byte/s for this long
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
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names; last value wins
  std::string body;
  std::string effective_url;
  std::string header(const std::string& lower_name) const;
};

struct HttpTransportError : Error {
  HttpTransportError(const std::string& what, bool retryable, int curl_code)
      : Error(what, retryable), curl_code(curl_code) {}
  int curl_code;
  bool tls_verification() const;  // certificate not trusted / wrong host name
  bool not_tls() const;           // the server does not speak TLS on this port
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

// Percent-encodes a URL query value.
std::string url_escape(const std::string& s);

}  // namespace imgtool::image
