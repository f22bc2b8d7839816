#include "image/engine_api.h"

#include "core/engine.h"
#include "core/error.h"
#include "core/json_file.h"
#include "core/strings.h"

namespace imgtool::image {
namespace {

constexpr const char* kApi = "http://docker/v1.41";
constexpr long kMetadataStallS = 120;
constexpr long kStreamStallS = 1800;

HttpOptions engine_http(const std::string& socket, long stall_s) {
  return HttpOptions{.unix_socket = socket, .connect_timeout_s = 20, .low_speed_timeout_s = stall_s};
}

// The engine's own words: {"message": "No such image: x"}, else the start of the body, in one line.
std::string engine_message(const std::string& body) {
  auto j = parse_json_or_discarded(body);
  bool message = j.is_object() && j.contains("message") && j["message"].is_string();
  std::string line = strings::trim(message ? j["message"].get<std::string>().substr(0, 400) : body.substr(0, 200));
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  return line;
}

}  // namespace

EngineApi::EngineApi(std::string socket)
    : socket_(socket.empty() ? imgtool::engine_socket() : std::move(socket)),
      metadata_(engine_http(socket_, kMetadataStallS)),
      streams_(engine_http(socket_, kStreamStallS)) {}

HttpResponse EngineApi::send(HttpClient& via, const HttpRequest& r) {
  try {
    return via.send(r);
  } catch (const HttpTransportError& e) {
    throw Error("cannot talk to the Docker engine at unix://" + socket_ + ": " + e.what() +
                    " (fix: start dockerd or set DOCKER_HOST=unix:///PATH/TO/docker.sock)",
                e.retryable);
  }
}

void EngineApi::refuse(const std::string& what, const HttpResponse& r) const {
  throw Error(what + " failed: HTTP " + std::to_string(r.status) + " " + engine_message(r.body), r.status >= 500);
}

std::optional<nlohmann::json> EngineApi::get_json(const std::string& path, const std::string& what, size_t max_body) {
  HttpResponse r = send(metadata_, {.method = "GET", .url = kApi + path, .max_body = max_body});
  if (r.status == 404) return std::nullopt;
  if (r.status != 200) refuse(what, r);
  auto j = parse_json_or_discarded(r.body);
  if (j.is_discarded())
    throw Error(what + ": expected JSON from the engine, found " + strings::quoted(engine_message(r.body)));
  return j;
}

void EngineApi::get_stream(const std::string& path, const std::string& what,
                           const std::function<bool(const char*, size_t)>& on_data) {
  HttpResponse r = send(streams_, {.method = "GET", .url = kApi + path, .on_data = on_data});
  if (r.status != 200) refuse(what, r);
}

void EngineApi::post(const std::string& path, const std::string& what, BlobReader& body, int64_t size,
                     const std::string& content_type) {
  HttpRequest req{"POST", kApi + path, {"Content-Type: " + content_type}};
  req.upload = &body;
  req.upload_size = size;
  req.max_body = kMaxMetadataBytes;
  HttpResponse r = send(streams_, req);
  // A JSON stream of progress messages; a failure after the 200 is one of them: {"error": …}.
  if (r.status != 200 || r.body.find("\"error") != std::string::npos) refuse(what, r);
}

}  // namespace imgtool::image
