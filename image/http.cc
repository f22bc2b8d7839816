#include "image/http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstring>

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
};

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
  t->resp->headers[name] = b == std::string::npos ? "" : value.substr(b, e - b + 1);
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
    case CURLE_COULDNT_CONNECT: case CURLE_SEND_ERROR: case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING: case CURLE_OPERATION_TIMEDOUT: case CURLE_PARTIAL_FILE:
    case CURLE_COULDNT_RESOLVE_HOST: case CURLE_HTTP2: case CURLE_HTTP2_STREAM:
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
  if (r.method == "HEAD") curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  else if (r.method != "GET" && !(r.method == "PUT" && r.upload)) curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r.method.c_str());
}

}  // namespace

std::string HttpResponse::header(const std::string& n) const {
  auto it = headers.find(n);
  return it == headers.end() ? "" : it->second;
}

bool HttpTransportError::tls_verification() const {
  return curl_code == CURLE_PEER_FAILED_VERIFICATION || curl_code == CURLE_SSL_CACERT_BADFILE;
}
bool HttpTransportError::not_tls() const { return curl_code == CURLE_SSL_CONNECT_ERROR; }

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
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, r.method == "GET" || r.method == "HEAD" ? 1L : 0L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, opt_.connect_timeout_s);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, opt_.low_speed_timeout_s);
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
    std::string msg = r.method + " " + r.url + ": " + (errbuf[0] ? errbuf : curl_easy_strerror(rc));
    throw HttpTransportError(msg, retryable_code(rc), rc);
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
