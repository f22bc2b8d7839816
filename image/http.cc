#include "image/http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/strings.h"

namespace imgtool::image {
namespace {

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

struct Transfer {
  const HttpRequest* req;
  HttpResponse* resp;
  CURL* h;
  std::exception_ptr upload_err;
  bool aborted = false;
  size_t too_large = 0;  // the cap a kept body passed (0: none)
};

// Fields whose repeated lines are one comma-separated list (RFC 9110 §5.3): a second `Link`
// line adds links, it does not replace the first line's.
bool is_list_header(const std::string& lower_name) {
  static const char* const kLists[] = {"link", "www-authenticate"};
  return std::any_of(std::begin(kLists), std::end(kLists), [&](const char* l) { return lower_name == l; });
}

size_t on_header(char* data, size_t size, size_t n, void* ud) {
  auto* t = static_cast<Transfer*>(ud);
  std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (redirect, 100-continue)
    t->resp->headers.clear();
    return size * n;
  }
  auto colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string name = line.substr(0, colon), value = line.substr(colon + 1);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  auto b = value.find_first_not_of(" \t"), e = value.find_last_not_of(" \t\r\n");
  value = b == std::string::npos ? "" : value.substr(b, e - b + 1);
  auto [it, fresh] = t->resp->headers.emplace(name, value);
  if (!fresh) it->second = is_list_header(name) ? it->second + ", " + value : value;
  return size * n;
}

size_t on_body(char* data, size_t size, size_t n, void* ud) {
  auto* t = static_cast<Transfer*>(ud);
  long code = 0;
  curl_easy_getinfo(t->h, CURLINFO_RESPONSE_CODE, &code);
  if (t->req->on_data && code >= 200 && code < 300) {
    if (!t->req->on_data(data, size * n)) {
      t->aborted = true;
      return 0;
    }
  } else {
    bool ok = code >= 200 && code < 300;  // an error answer's body is only ever a message
    size_t cap = ok ? t->req->max_body : std::min(t->req->max_body, kMaxSmallBodyBytes);
    if (t->resp->body.size() + size * n > cap) {
      t->too_large = cap;
      return 0;  // libcurl aborts the transfer (CURLE_WRITE_ERROR)
    }
    t->resp->body.append(data, size * n);
  }
  return size * n;
}

size_t on_read(char* buf, size_t size, size_t n, void* ud) {
  auto* t = static_cast<Transfer*>(ud);
  try {
    return t->req->upload->read(buf, size * n);
  } catch (...) {
    t->upload_err = std::current_exception();
    return CURL_READFUNC_ABORT;
  }
}

bool retryable_code(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

curl_slist* build_headers(const HttpRequest& r) {
  curl_slist* l = nullptr;
  for (auto& h : r.headers) l = curl_slist_append(l, h.c_str());
  l = curl_slist_append(l, "Expect:");  // no 100-continue round trip
  return l;
}

void set_body(CURL* h, const HttpRequest& r) {
  if (r.upload) {
    curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(r.upload_size));
  } else if (r.method == "PUT" || r.method == "POST" || r.method == "PATCH") {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, r.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
  }
  if (r.method == "HEAD")
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  else if (r.method != "GET" && !(r.method == "PUT" && r.upload))
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r.method.c_str());
}

bool is_https(const std::string& url) { return url.rfind("https://", 0) == 0; }

// Which protocols a request may use and be redirected to: never http after https.
void set_protocols(CURL* h, const HttpRequest& r, bool http_ok) {
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, http_ok ? "http,https" : "https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, is_https(r.url) || !http_ok ? "https" : "http,https");
  curl_easy_setopt(h, CURLOPT_UNRESTRICTED_AUTH, 0L);
}

void set_limits(CURL* h, const HttpOptions& o, const HttpRequest& r) {
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, o.connect_timeout_s);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, o.low_speed_bytes);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, o.low_speed_timeout_s);
  auto deadline = r.timeout.count() >= 0 ? r.timeout : o.timeout;
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(deadline.count()));
  if (!r.on_data && r.method != "HEAD")
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(r.max_body));
}

// The one-line reason for a failed transfer, in words a user can act on.
std::string failure_text(const HttpRequest& r, const HttpResponse& resp, const Transfer& t, CURLcode rc,
                         const char* errbuf) {
  std::string where = r.method + " " + strings::url_for_message(r.url) + ": ";
  if (t.too_large || rc == CURLE_FILESIZE_EXCEEDED)
    return where + "the answer is larger than the " + std::to_string(t.too_large ? t.too_large : r.max_body) +
           "-byte limit; transfer aborted";
  if (rc == CURLE_UNSUPPORTED_PROTOCOL && !resp.header("location").empty())
    return where + "refused a redirect to " + strings::url_for_message(resp.header("location")) +
           (is_https(r.url) ? " (https may not be redirected to plain http)" : " (only http(s) is followed)");
  return where + strings::printable(errbuf[0] ? errbuf : curl_easy_strerror(rc));
}

}  // namespace

std::string UrlOrigin::host_port() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string UrlOrigin::str() const { return scheme + "://" + host_port(); }

UrlOrigin url_origin(const std::string& url) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), curl_url_cleanup);
  auto part = [&](CURLUPart p, unsigned flags) {
    char* v = nullptr;
    if (curl_url_get(u.get(), p, &v, flags) != CURLUE_OK || !v) return std::string();
    std::string s(v);
    curl_free(v);
    return s;
  };
  if (curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK)
    throw Error("expected an absolute http(s) URL, found '" + strings::url_for_message(url) + "'");
  UrlOrigin o{part(CURLUPART_SCHEME, 0), part(CURLUPART_HOST, 0), 0};
  std::string port = part(CURLUPART_PORT, CURLU_DEFAULT_PORT);
  if ((o.scheme != "http" && o.scheme != "https") || o.host.empty() || port.empty())
    throw Error("expected an absolute http(s) URL, found '" + strings::url_for_message(url) + "'");
  if (o.host.size() > 2 && o.host.front() == '[') o.host = o.host.substr(1, o.host.size() - 2);
  for (auto& c : o.host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  o.port = std::stoi(port);
  return o;
}

std::string resolve_url(const std::string& base, const std::string& ref) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), curl_url_cleanup);
  char* v = nullptr;
  if (curl_url_set(u.get(), CURLUPART_URL, base.c_str(), 0) != CURLUE_OK ||
      curl_url_set(u.get(), CURLUPART_URL, ref.c_str(), 0) != CURLUE_OK ||
      curl_url_get(u.get(), CURLUPART_URL, &v, 0) != CURLUE_OK || !v)
    throw Error("cannot resolve the URL reference '" + ref + "' against " + base);
  std::string out(v);
  curl_free(v);
  return out;
}

std::string HttpResponse::header(const std::string& n) const {
  auto it = headers.find(n);
  return it == headers.end() ? "" : it->second;
}

bool HttpTransportError::tls_verification() const {
  return curl_code == CURLE_PEER_FAILED_VERIFICATION || curl_code == CURLE_SSL_CACERT_BADFILE;
}
bool HttpTransportError::not_tls() const {
  static const char* const kHttpAnswer[] = {"wrong version number", "http request"};
  std::string d = strings::lower(detail);
  return curl_code == CURLE_SSL_CONNECT_ERROR &&
         std::any_of(std::begin(kHttpAnswer), std::end(kHttpAnswer),
                     [&](const char* m) { return d.find(m) != std::string::npos; });
}

HttpClient::HttpClient(HttpOptions o) : opt_(std::move(o)) { static CurlGlobal g; }

HttpClient::~HttpClient() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* HttpClient::acquire() {
  {
    std::lock_guard lk(mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void HttpClient::release(void* h) {
  std::lock_guard lk(mu_);
  idle_.push_back(h);
}

HttpResponse HttpClient::send(const HttpRequest& r) {
  bool http_ok = opt_.allow_http || !opt_.unix_socket.empty();
  if (!http_ok && !is_https(r.url))
    throw HttpTransportError(
        r.method + " " + strings::url_for_message(r.url) + ": refused: only https is allowed for this host", false,
        CURLE_UNSUPPORTED_PROTOCOL);
  CURL* h = static_cast<CURL*>(acquire());
  curl_easy_reset(h);
  HttpResponse resp;
  Transfer t{&r, &resp, h, nullptr};
  curl_slist* hdrs = build_headers(r);
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(h, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_READDATA, &t);
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION,
                   r.follow_redirects && (r.method == "GET" || r.method == "HEAD") ? 1L : 0L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
  set_protocols(h, r, http_ok);
  set_limits(h, opt_, r);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "imgtool/0.1");
  curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 512L * 1024);
  curl_easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, 2L * 1024 * 1024);
  if (!opt_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, opt_.ca_file.c_str());
  if (!opt_.unix_socket.empty()) curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, opt_.unix_socket.c_str());
  set_body(h, r);
  CURLcode rc = curl_easy_perform(h);
  curl_slist_free_all(hdrs);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp.status);
  char* eff = nullptr;
  curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &eff);
  if (eff) resp.effective_url = eff;
  release(h);
  if (t.upload_err) std::rethrow_exception(t.upload_err);
  if (rc != CURLE_OK && !(t.aborted && rc == CURLE_WRITE_ERROR)) {
    bool capped = t.too_large || rc == CURLE_FILESIZE_EXCEEDED;
    throw HttpTransportError(failure_text(r, resp, t, rc, errbuf), !capped && retryable_code(rc),
                             capped ? CURLE_FILESIZE_EXCEEDED : rc, errbuf[0] ? errbuf : curl_easy_strerror(rc));
  }
  return resp;
}

std::string url_escape(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace imgtool::image
