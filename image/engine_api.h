// The ONE Docker Engine API client: every HTTP call imgtool makes to a Docker engine — the
// docker-daemon: transport's inspect, save and load (image/daemon_transport.h) and the engine seam's
// inspect and list (engine/docker_engine.h) — goes through an EngineApi, over the Unix socket it
// resolved once when made (core/engine.h: $DOCKER_HOST=unix://PATH, else /var/run/docker.sock).
//
//   get_json(path)    a JSON answer (inspect, list; metadata-sized); nullopt for 404
//   get_stream(path)  a streamed answer (docker save: GET /images/NAME/get)
//   post(path, body)  a streamed request body (docker load: POST /images/load)
//
// Errors: no answer from the socket -> Error "cannot talk to the Docker engine at unix://PATH: …
// (fix: …)" (retryable when a retry may help); an answer that is not what was asked for -> Error
// naming the call ("docker image inspect x: HTTP 500 …"). Calls are safe from several threads.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "image/http.h"

namespace imgtool::image {

class EngineApi {
 public:
  // socket: "" = the run's one engine (core/engine.h); InputError when $DOCKER_HOST names no Unix socket.
  explicit EngineApi(std::string socket = "");
  const std::string& socket() const { return socket_; }

  // GET `path` ("/images/NAME/json"): the parsed JSON answer, nullopt for 404. `what` names the call in
  // errors; the body is at most max_body bytes.
  std::optional<nlohmann::json> get_json(const std::string& path, const std::string& what,
                                         size_t max_body = kMaxMetadataBytes);
  // GET `path`, the body handed to on_data as it arrives (return false to stop). Error for an
  // answer other than 200 (then on_data was never called).
  void get_stream(const std::string& path, const std::string& what,
                  const std::function<bool(const char*, size_t)>& on_data);
  // POST `size` bytes of `body` as `content_type`; Error for an answer other than 200, or one whose
  // JSON stream reports an error ({"error": …}, as /images/load does).
  void post(const std::string& path, const std::string& what, BlobReader& body, int64_t size,
            const std::string& content_type);

 private:
  HttpResponse send(HttpClient& via, const HttpRequest& r);
  [[noreturn]] void refuse(const std::string& what, const HttpResponse& r) const;

  std::string socket_;
  HttpClient metadata_;  // inspect, list: an engine silent for 2 minutes is stuck
  HttpClient streams_;   // save, load: a busy engine exports a whole image before its first byte
};

}  // namespace imgtool::image
