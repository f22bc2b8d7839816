#include "engine/fake_engine.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/hash.h"
#include "image/config.h"
#include "image/copy.h"

namespace imgtool::engine {
namespace {

using nlohmann::json;

// A name without a tag means :latest, as in docker.
std::string normal_name(const std::string& ref) {
  if (ref.rfind("sha256:", 0) == 0) return ref;
  auto slash = ref.rfind('/');
  auto colon = ref.rfind(':');
  bool tagged = colon != std::string::npos && (slash == std::string::npos || colon > slash);
  return tagged || ref.find('@') != std::string::npos ? ref : ref + ":latest";
}

}  // namespace

FakeEngine::FakeEngine() : store_(std::make_shared<image::MemoryStore>()) {}

void FakeEngine::enter(const std::string& call) {
  calls.push_back(call);
  if (unreachable) throw Error("cannot talk to the Docker engine (fake engine: unreachable)", true);
}

bool FakeEngine::called(const std::string& prefix) const {
  return std::any_of(calls.begin(), calls.end(), [&](const auto& c) { return c.rfind(prefix, 0) == 0; });
}

ImageInfo* FakeEngine::find_locked(const std::string& ref) {
  auto n = names_.find(normal_name(ref));
  auto it = images_.find(n != names_.end() ? n->second : ref);
  return it == images_.end() ? nullptr : &it->second;
}

ImageInfo* FakeEngine::find(const std::string& ref) {
  std::lock_guard lock(mu_);
  return find_locked(ref);
}

// A real (layer-less) OCI image in the store: the config carries the labels, its digest is the ID.
ImageInfo FakeEngine::store_image(const std::map<std::string, std::string>& labels, const std::string& salt) {
  json cfg = {{"architecture", "amd64"},
              {"os", "linux"},
              {"config", {{"Labels", labels}}},
              {"rootfs", {{"type", "layers"}, {"diff_ids", json::array()}}},
              {"comment", salt}};
  std::string bytes = cfg.dump();
  image::Descriptor d{image::media::kOciConfig, sha256_digest(bytes), static_cast<int64_t>(bytes.size()), {}};
  store_->put_blob(d.digest, bytes);
  image::Manifest m{
      json{{"schemaVersion", 2}, {"mediaType", image::media::kOciManifest}, {"config", d}, {"layers", json::array()}}
          .dump(),
      image::media::kOciManifest};
  store_->put_manifest(m, d.digest);
  ImageInfo info;
  info.id = d.digest;
  info.labels = labels;
  info.os = "linux";
  info.architecture = "amd64";
  return info;
}

void FakeEngine::name_image(const std::string& name, const std::string& id) {
  std::string n = normal_name(name);
  if (auto old = names_.find(n); old != names_.end() && images_.count(old->second)) {
    auto& tags = images_[old->second].repo_tags;
    tags.erase(std::remove(tags.begin(), tags.end(), n), tags.end());
  }
  names_[n] = id;
  images_[id].repo_tags.push_back(n);
}

ImageInfo FakeEngine::add_image(const std::vector<std::string>& names, ImageInfo info) {
  std::lock_guard lock(mu_);
  if (info.id.empty()) {
    ImageInfo stored = store_image(info.labels, std::to_string(images_.size()));
    info.id = stored.id;
  }
  info.repo_tags.clear();  // names_ decides; name_image() fills them
  images_[info.id] = info;
  for (const auto& n : names) name_image(n, info.id);
  return images_[info.id];
}

std::optional<ImageInfo> FakeEngine::inspect(const std::string& ref) {
  std::lock_guard lock(mu_);
  enter("inspect " + ref);
  ImageInfo* i = find_locked(ref);
  return i ? std::optional(*i) : std::nullopt;
}

BuildResult FakeEngine::build(const BuildRequest& r) {
  std::lock_guard lock(mu_);
  enter("build " + r.image);
  builds.push_back(r);
  std::string outcome = "ok";
  if (auto& q = build_script[r.image]; !q.empty()) {
    outcome = q.front();
    q.pop_front();
  }
  if (outcome.rfind("throw:", 0) == 0) throw Error(outcome.substr(6));
  if (outcome == "timeout") return {RunResult{124, true, "", ""}, ""};
  if (outcome != "ok") return {RunResult{1, false, "", outcome}, ""};
  auto labels = r.labels;
  auto mark = stage_mark_arg.empty() ? r.build_args.end() : r.build_args.find(stage_mark_arg);
  if (mark != r.build_args.end() && !r.target.empty()) {
    labels[stage_mark_label] = mark->second;  // the stage is the image
  } else if (mark != r.build_args.end()) {    // the first stage, left behind untagged
    ImageInfo stage = store_image({{stage_mark_label, mark->second}}, r.image + "#stage" + std::to_string(built_));
    images_[stage.id] = stage;
  }
  ++built_;
  ImageInfo img = store_image(labels, reproducible_builds ? "" : r.image + "#" + std::to_string(built_));
  images_[img.id] = img;
  name_image(r.image, img.id);
  return {RunResult{0, false, "Successfully built " + img.id.substr(7, 12) + "\n", ""}, img.id};
}

RunResult FakeEngine::run(const RunRequest& r) {
  std::lock_guard lock(mu_);
  enter("run " + r.image);
  run_argv(r);  // the real engine's contract: a flag that would widen the fence is refused (InputError)
  runs.push_back(r);
  if (!find_locked(r.image))
    return {125, false, "",
            "Unable to find image '" + r.image +
                "' locally\ndocker: Error response from daemon: "
                "pull access denied for " +
                r.image + ".\n"};
  return on_run ? on_run(r) : RunResult{0, false, "", ""};
}

std::unique_ptr<image::ImageSource> FakeEngine::save(const std::string& ref) {
  std::lock_guard lock(mu_);
  enter("save " + ref);
  ImageInfo* i = find_locked(ref);
  if (!i) throw InputError("docker-daemon:" + ref + ": no such image in the Docker engine");
  return std::make_unique<image::MemorySource>(store_, i->id);  // an added image without a stored config: Error on read
}

LoadResult FakeEngine::load(image::ImageSource& src, const std::string& name,
                            const std::function<void(const std::string&)>& log) {
  std::lock_guard lock(mu_);
  enter("load " + name);
  image::Manifest m = src.manifest();
  image::MemoryDestination dst(store_);
  image::CopyOptions co;
  co.log = log;
  auto res = image::copy_image(src, dst, m.config().digest, co);  // "tagged" by its ID, so save() serves it
  image::MemorySource loaded(store_, m.config().digest);
  ImageInfo info;
  info.id = load_reencodes ? sha256_digest("re-encoded " + m.config().digest) : m.config().digest;
  image::ImageConfig cfg = image::read_image_config(loaded, m);
  info.labels = cfg.labels;
  info.created = cfg.created;
  images_[info.id] = info;
  name_image(name, info.id);
  return {res.digest, res.blobs, res.seconds};
}

// "KEY" matches a label that is set, "KEY=VALUE" one with that value (docker's --filter label=).
static bool fake_label_matches(const ImageInfo& i, const std::string& want) {
  auto eq = want.find('=');
  auto it = i.labels.find(want.substr(0, eq));
  return it != i.labels.end() && (eq == std::string::npos || it->second == want.substr(eq + 1));
}

std::vector<ImageInfo> FakeEngine::list_images(const ImageFilter& f) {
  std::lock_guard lock(mu_);
  std::string call = "list";
  for (size_t k = 0; k < f.labels.size(); ++k) call += (k ? "," : " ") + f.labels[k];
  enter(call + (f.dangling ? " dangling" : ""));
  std::vector<ImageInfo> out;
  for (const auto& [id, info] : images_) {
    bool ok = !f.dangling || info.repo_tags.empty();
    for (const auto& l : f.labels) ok = ok && fake_label_matches(info, l);
    if (ok) out.push_back(info);
  }
  return out;
}

bool FakeEngine::remove(const std::string& ref) {
  std::lock_guard lock(mu_);
  enter("remove " + ref);
  auto n = names_.find(normal_name(ref));
  if (n != names_.end()) {  // untag; the image goes with its last name
    std::string id = n->second;
    names_.erase(n);
    auto& tags = images_[id].repo_tags;
    tags.erase(std::remove(tags.begin(), tags.end(), normal_name(ref)), tags.end());
    if (tags.empty()) images_.erase(id);
    return true;
  }
  if (!images_.count(ref)) return false;
  for (const auto& t : images_[ref].repo_tags) names_.erase(t);
  images_.erase(ref);
  return true;
}

}  // namespace imgtool::engine
