#include "engine/docker_engine.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "image/copy.h"
#include "image/daemon_transport.h"

namespace imgtool::engine {
namespace {

using nlohmann::json;

constexpr size_t kMaxImageListBytes = 64u << 20;  // a listing is ~0.5 KiB an image

std::vector<std::string> strings(const json& j, const char* key) {
  std::vector<std::string> v;
  if (j.is_object() && j.contains(key) && j[key].is_array())
    for (const auto& s : j[key])
      if (s.is_string()) v.push_back(s.get<std::string>());
  return v;
}

}  // namespace

ImageInfo image_info_from_json(const json& j) {
  ImageInfo i;
  i.id = j.value("Id", "");
  i.repo_tags = strings(j, "RepoTags");
  i.repo_digests = strings(j, "RepoDigests");
  i.os = j.value("Os", "");
  i.architecture = j.value("Architecture", "");
  if (j.contains("Created") && j["Created"].is_string()) i.created = j["Created"].get<std::string>();
  if (j.contains("Size") && j["Size"].is_number_integer()) i.size = j["Size"].get<int64_t>();
  const json cfg = j.contains("Config") && j["Config"].is_object() ? j["Config"] : json::object();
  if (cfg.contains("Labels") && cfg["Labels"].is_object())
    for (const auto& [k, v] : cfg["Labels"].items())
      if (v.is_string()) i.labels[k] = v.get<std::string>();
  i.env = strings(cfg, "Env");
  if (j.contains("RootFS") && j["RootFS"].is_object()) i.diff_ids = strings(j["RootFS"], "Layers");
  return i;
}

ImageInfo image_summary_from_json(const json& j) {
  ImageInfo i;
  i.id = j.value("Id", "");
  for (auto& t : strings(j, "RepoTags"))
    if (t != "<none>:<none>") i.repo_tags.push_back(t);
  for (auto& d : strings(j, "RepoDigests"))
    if (d != "<none>@<none>") i.repo_digests.push_back(d);
  if (j.contains("Labels") && j["Labels"].is_object())
    for (const auto& [k, v] : j["Labels"].items())
      if (v.is_string()) i.labels[k] = v.get<std::string>();
  if (j.contains("Size") && j["Size"].is_number_integer()) i.size = j["Size"].get<int64_t>();
  return i;
}

std::string image_filters_json(const ImageFilter& f) {
  json filters = json::object();
  if (!f.labels.empty()) filters["label"] = f.labels;
  if (f.dangling) filters["dangling"] = {"true"};
  return filters.dump();
}

DockerEngine::DockerEngine() : api_(std::make_shared<image::EngineApi>()), socket_(api_->socket()) {}

// Every CLI call goes to the engine this object resolved, whatever `docker context` says.
RunResult DockerEngine::cli(const std::vector<std::string>& argv, RunOptions o) {
  o.env["DOCKER_HOST"] = "unix://" + socket_;
  return imgtool::run(argv, o);
}

bool DockerEngine::buildkit() {
  std::call_once(buildkit_once_, [this] {
    if (const char* v = std::getenv("IMGTOOL_BUILDKIT"); v && *v)
      buildkit_ = std::string(v) == "1";
    else
      buildkit_ = cli({"docker", "buildx", "version"}).ok();
  });
  return buildkit_;
}

std::string DockerEngine::builder_kind() { return buildkit() ? "buildkit" : "classic"; }

std::optional<ImageInfo> DockerEngine::inspect(const std::string& ref) {
  auto j = api_->get_json("/images/" + ref + "/json", "docker image inspect " + ref);
  if (!j) return std::nullopt;
  if (!j->is_object()) throw Error("docker image inspect " + ref + ": expected a JSON object, found " + j->type_name());
  return image_info_from_json(*j);
}

// The timeout is enforced by coreutils timeout(1) rather than RunOptions::timeout:
// Boost 1.74's wait_for waited on SIGCHLD, which with -j N threads could be taken
// by another thread, leaving a finished build unnoticed until the deadline (run()
// now polls instead: core/process.cc wait_until; timeout(1) stays, and its
// --kill-after reaches the whole build).
// The image ID comes back through --iidfile, in a private folder of this build's own: the ID decides
// what is smoked, gated, pushed and signed, so no other user may plant or rewrite that file.
BuildResult DockerEngine::build(const BuildRequest& r) {
  PrivateTempDir dir("imgtool-build-");
  fs::path iid = dir / "iid";
  auto argv = build_argv(r, iid);
  argv.insert(argv.begin(), {"timeout", "--kill-after=30", std::to_string(r.timeout.count())});
  RunOptions o{.log_path = r.log_path.string(), .env = {{"DOCKER_BUILDKIT", buildkit() ? "1" : "0"}}};
  BuildResult res{cli(argv, o), ""};
  if (res.run.exit_code == 124 || res.run.exit_code == 137) res.run.timed_out = true;
  if (res.run.ok() && fs::exists(iid)) res.image_id = read_file(iid);
  return res;
}

RunResult DockerEngine::run(const RunRequest& r) {
  if (r.name.empty()) throw InputError("engine run: expected a container name, found none");
  RunResult res = cli(run_argv(r), {.timeout = r.timeout, .max_output = kMaxRunOutput});
  if (res.timed_out) cli({"docker", "rm", "-f", r.name}, {.timeout = std::chrono::seconds(60)});
  return res;
}

std::unique_ptr<image::ImageSource> DockerEngine::save(const std::string& ref) {
  return std::make_unique<image::DaemonSource>(ref, image::DaemonOptions{.engine = api_});
}

LoadResult DockerEngine::load(image::ImageSource& src, const std::string& name,
                              const std::function<void(const std::string&)>& log) {
  image::DaemonDestination dst(name, image::DaemonOptions{.engine = api_});
  image::CopyOptions co;
  co.log = log;
  auto res = image::copy_image(src, dst, "", co);
  return {res.digest, res.blobs, res.seconds};
}

std::vector<ImageInfo> DockerEngine::list_images(const ImageFilter& f) {
  std::string path = "/images/json?filters=" + image::url_escape(image_filters_json(f));
  auto j = api_->get_json(path, "docker image ls", kMaxImageListBytes);
  if (!j || !j->is_array())
    throw Error(std::string("docker image ls: expected a JSON array, found ") + (j ? j->type_name() : "HTTP 404"));
  std::vector<ImageInfo> out;
  for (const auto& e : *j)
    if (e.is_object()) out.push_back(image_summary_from_json(e));
  return out;
}

bool DockerEngine::remove(const std::string& ref) {
  RunResult r = cli({"docker", "image", "rm", ref}, {.timeout = std::chrono::seconds(120)});
  if (r.ok()) return true;
  if (r.err.find("No such image") != std::string::npos) return false;
  throw Error("docker image rm " + ref + ": " + (r.err.empty() ? r.out : r.err),
              r.err.find("Cannot connect") != std::string::npos);
}

}  // namespace imgtool::engine
