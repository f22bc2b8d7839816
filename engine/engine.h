// The Docker engine seam. What the library asks of a Docker engine — the
// builder's `docker build`, the smoke's `docker run`, verify's inspect/load/rm,
// the nightly's gate and push reading an image (save), prune — is one call on an
// Engine; the docker-daemon: transport and run/image_facts.cc speak the Engine API
// (image/engine_api.h), and doctor's host probes (host/host_system.h) run the docker
// CLI, all on the same pinned socket. So:
//   * a run talks to ONE engine ($DOCKER_HOST=unix://PATH, else
//     /var/run/docker.sock, resolved once when the engine is made:
//     core/engine.h), whatever `docker context` says;
//   * unit tests of builder/, verify/ (smoke, verify's smoke part) and the
//     nightly use ONE double, engine/fake_engine.h, beside this model;
//   * integration tests use the real engine (engine/docker_engine.h).
//
// Isolation. Every container imgtool starts runs an image it does not trust (a cell just built
// from a matrix anyone may edit, a registry image under verify, doctor's probe image), so
// run_argv() puts one fixed fence on every RunRequest, least privilege (isolation_flags(), and
// --memory from run_argv()):
//   --network none                     the probe needs no network: nothing in the image reaches
//                                      the host's services, the cloud metadata service or the Internet
//   --cap-drop ALL                     root in the container holds no capability (ulimits, /dev/shm
//                                      and the GPU devices are set up by the runtime, before the drop)
//   --security-opt no-new-privileges   a setuid binary in the image gains nothing
//   --pids-limit 4096                  a fork bomb stops there, not at the host's pid_max (32768 on
//                                      many hosts). Threads count as tasks, and Paddle's CPU pool
//                                      is a thread a logical CPU: the whole probe peaked at 15
//                                      tasks with OMP_NUM_THREADS=1 and 69 with 64 (~14 + the pool);
//                                      run_check on 8 GPUs of a 224-CPU host, a process a GPU with
//                                      its own pool and CUDA/NCCL threads, is ~8 x 260 = ~2,100, so
//                                      4096 leaves as much again for DataLoader workers
//   --log-driver none                  the engine keeps no copy of the output (json-file would
//                                      write all of it to the engine's disk); the attached CLI
//                                      still gets both streams
//   --memory 3/4 of the host's RAM     unless the request sets --memory (a run profile's limit):
//                                      an image's runaway allocation is its own OOM, not the host's
// and DockerEngine::run keeps at most kMaxRunOutput bytes of each stream (core/process.h:
// max_output; the rest is read and dropped, a note ends the cut stream).
// No option loosens the fence. A request's own flags (a run profile's ulimits, user, env, limits)
// pass only through admit_flags()'s table of flags that cannot widen it: --cap-add,
// --privileged, --network, --ipc host, --pid, --device, --security-opt, -v … are refused, so a
// profile cannot hand a capability to an image under test (the smoke reports what it left out).
//
// Data model first, then the interface.
//   ImageInfo     what the engine knows of a local image (inspect)
//   BuildRequest  one `docker build`; BuildResult: its run + the image ID
//   RunRequest    one `docker run --rm` of a command in an image (the smoke probe)
//   LoadResult    what loading an image (ImageSource → engine) did
//   ImageFilter   which local images list_images() returns (labels, dangling)
#pragma once
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/process.h"
#include "image/image.h"

namespace imgtool::engine {

namespace fs = std::filesystem;

// A local image as the engine reports it (`docker image inspect`).
struct ImageInfo {
  std::string id;                             // "sha256:…" image ID = config digest
  std::vector<std::string> repo_tags;         // "name:tag"
  std::vector<std::string> repo_digests;      // "repo@sha256:…" (pulled or pushed by the CLI)
  std::map<std::string, std::string> labels;  // Config.Labels (the image's claims)
  std::vector<std::string> env;               // Config.Env ("K=V")
  std::string os, architecture;               // "linux", "amd64"
  std::string created;                        // RFC 3339, as the engine reports it ("" = unknown)
  std::vector<std::string> diff_ids;          // RootFS.Layers
  int64_t size = 0;                           // bytes, as the engine counts them
};

// One `docker build` invocation.
struct BuildRequest {
  fs::path context;                               // build context folder
  fs::path dockerfile;                            // usually context/Dockerfile
  std::string image;                              // name:tag to tag the result with
  std::string target;                             // stage to stop at; empty = the last stage
  std::map<std::string, std::string> build_args;  // --build-arg K=V
  std::map<std::string, std::string> labels;      // --label K=V (added after the Dockerfile's own)
  std::chrono::seconds timeout{3600};             // the build is killed after this
  fs::path log_path;                              // output is appended here
  bool no_cache = false;                          // --no-cache: every step runs again (a reproduction)
};

// What one build produced.
struct BuildResult {
  RunResult run;         // exit code, output, timed_out
  std::string image_id;  // "sha256:…" when the build succeeded
  bool ok() const { return run.ok() && !image_id.empty(); }
};

// A bind mount of a host folder into the container.
struct Mount {
  std::string host, container;
  bool read_only = true;
};

// The fence on every container (see Isolation above); run_argv() puts it right after the name.
inline constexpr int kPidsLimit = 4096;
// --memory when the request's flags set none (a run profile's `memory` wins): three quarters of this
// host's RAM, so one image's runaway allocation is the container's OOM, never the host's.
uint64_t default_memory_limit();
inline constexpr size_t kMaxRunOutput = 4u << 20;  // bytes kept of stdout and of stderr (the probe writes ~10 KiB)
const std::vector<std::string>& isolation_flags();

// One `docker run --rm --name NAME <fence> … IMAGE ARGS…`; the container is gone afterwards.
struct RunRequest {
  std::string image;                  // any reference the engine resolves (name:tag, image ID)
  std::string name;                   // container name (required: a timed-out run is removed by it)
  std::string gpus;                   // --gpus value; "" or "none" = no --gpus flag
  std::string shm_size;               // --shm-size; "" = Docker's default (64 MB)
  std::vector<std::string> flags;     // further docker run flags as "--flag" "value" pairs (a run profile's
                                      // ulimits, user, env…): only what admit_flags() admits
  std::vector<Mount> mounts;          // -v HOST:CONTAINER[:ro]
  std::string entrypoint;             // --entrypoint; "" = the image's
  std::vector<std::string> args;      // the command after the image
  std::chrono::seconds timeout{900};  // the whole run; then the container is removed
};

struct LoadResult {
  std::string digest;  // manifest digest as loaded
  int blobs = 0;       // config + layers
  double seconds = 0;
};

// Which local images list_images() returns (`docker image ls --filter …`);
// every condition must hold.
struct ImageFilter {
  std::vector<std::string> labels;  // "KEY" (the label is set) or "KEY=VALUE"
  bool dangling = false;            // only untagged images (`--filter dangling=true`)
};

class Engine {
 public:
  virtual ~Engine() = default;

  // The local image `ref` (name[:tag] or image ID), or nullopt when the engine
  // has none. Throws imgtool::Error (retryable) when the engine cannot be reached.
  virtual std::optional<ImageInfo> inspect(const std::string& ref) = 0;

  // Several images at once (one request where the engine allows it); element i
  // answers refs[i]. Same contract as inspect().
  virtual std::vector<std::optional<ImageInfo>> inspect_all(const std::vector<std::string>& refs);

  // Runs one build. Never throws for a failed build: the result carries the exit
  // code, the output and timed_out. Throws imgtool::Error when it cannot even start.
  virtual BuildResult build(const BuildRequest& r) = 0;

  // "buildkit" or "classic": the builder build() drives.
  virtual std::string builder_kind() = 0;

  // Runs one container to its end (stdout/stderr captured, container stderr
  // included). Never throws for a failing run; on timeout the result has
  // timed_out set and the container has been removed (`docker rm -f NAME`).
  virtual RunResult run(const RunRequest& r) = 0;

  // The local image `ref` as an image source (manifest, config, layers as the
  // engine exports them: `docker save`). Reading is lazy; errors surface from
  // the source's calls (InputError when the image is absent).
  virtual std::unique_ptr<image::ImageSource> save(const std::string& ref) = 0;

  // Loads `src` into the engine and tags it `name` (`docker load`). The engine's
  // image ID is then the config digest of src's manifest, unless the engine
  // re-encodes images (check with inspect). Throws imgtool::Error on failure.
  virtual LoadResult load(image::ImageSource& src, const std::string& name,
                          const std::function<void(const std::string&)>& log = {}) = 0;

  // The engine's top-level images matching `f` (no classic-builder
  // intermediates: an intermediate goes with the image removed above it).
  // ImageInfo holds what a listing tells: id, repo_tags (empty for a dangling
  // image), repo_digests, labels, size — no env, os or diff_ids (inspect them).
  // Throws imgtool::Error (retryable) when the engine cannot be reached.
  virtual std::vector<ImageInfo> list_images(const ImageFilter& f) = 0;

  // Removes the local image `ref` (`docker image rm`, untag first). Returns false
  // when the engine had no such image; throws imgtool::Error for anything else
  // (in use by a container, engine unreachable), with the engine's message.
  virtual bool remove(const std::string& ref) = 0;
};

// The argv of `docker build` for a request (no timeout wrapper).
std::vector<std::string> build_argv(const BuildRequest& r, const fs::path& iidfile);

// A request's flags split by the fence: `admitted` holds the "--flag" "value" pairs that cannot
// widen it (--ulimit, --user, -e/--env, --cpus, --memory, --shm-size, --workdir, --ipc
// private|shareable|none); `refused` the rest, one "--flag value" string each (a flag without a
// value: the flag alone).
struct AdmittedFlags {
  std::vector<std::string> admitted;
  std::vector<std::string> refused;
};
AdmittedFlags admit_flags(const std::vector<std::string>& flags);

// The argv of `docker run` for a request, the fence included; what the smoke report shows.
// InputError naming the flag when r.flags holds one admit_flags() refuses.
std::vector<std::string> run_argv(const RunRequest& r);

// The run's one real engine (engine/docker_engine.h), made on first use: a
// process speaks to one engine. InputError when $DOCKER_HOST is not unix://.
Engine& local_engine();

}  // namespace imgtool::engine
