// The real engine: the Docker engine of this run, resolved ONCE when made
// ($DOCKER_HOST=unix://PATH, else /var/run/docker.sock; core/engine.h), and used
// for every call, so the CLI and the Engine API can never reach two engines.
//   inspect   Engine API GET /images/NAME/json (image/engine_api.h, no CLI process:
//             milliseconds, so an up-to-date check of many cells stays cheap)
//   build     `docker build` (DOCKER_BUILDKIT from $IMGTOOL_BUILDKIT when set, else 1 only
//             when `docker buildx version` works, else 0 — always explicit), --iidfile,
//             timeout(1) wrapper
//   run       `docker run --rm --name N <fence> …` (engine.h: Isolation), each output stream
//             kept up to kMaxRunOutput bytes (a note ends a cut one); on timeout `docker rm -f N`
//   save      the docker-daemon: transport's source (image/daemon_transport.h)
//   load      the copy engine into the docker-daemon: destination
//   list      Engine API GET /images/json?filters=… (labels, dangling)
//   remove    `docker image rm`
#pragma once
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/engine.h"
#include "image/engine_api.h"

namespace imgtool::engine {

class DockerEngine : public Engine {
 public:
  // InputError when $DOCKER_HOST names no Unix socket (core/engine.h).
  DockerEngine();
  std::optional<ImageInfo> inspect(const std::string& ref) override;
  BuildResult build(const BuildRequest& r) override;
  std::string builder_kind() override;
  RunResult run(const RunRequest& r) override;
  std::unique_ptr<image::ImageSource> save(const std::string& ref) override;
  LoadResult load(image::ImageSource& src, const std::string& name,
                  const std::function<void(const std::string&)>& log = {}) override;
  std::vector<ImageInfo> list_images(const ImageFilter& f) override;
  bool remove(const std::string& ref) override;

  const std::string& socket() const { return socket_; }

 private:
  RunResult cli(const std::vector<std::string>& argv, RunOptions o = {});
  bool buildkit();

  std::shared_ptr<image::EngineApi>
      api_;  // the one client: inspect and list here, save and load (image/daemon_transport.h)
  std::string socket_;
  std::once_flag buildkit_once_;
  bool buildkit_ = false;
};

// `docker image inspect`'s JSON object (Engine API /images/NAME/json) → ImageInfo.
ImageInfo image_info_from_json(const nlohmann::json& j);

// One entry of the Engine API's image list (/images/json) → ImageInfo (id,
// repo_tags without "<none>:<none>", repo_digests, labels, size).
ImageInfo image_summary_from_json(const nlohmann::json& j);

// The Engine API `filters` query value for `f` (JSON, not yet URL-escaped).
std::string image_filters_json(const ImageFilter& f);

}  // namespace imgtool::engine
