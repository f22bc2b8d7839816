#include "builder/base_pin.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "core/error.h"
#include "core/hash.h"
#include "image/reference.h"
#include "image/registry.h"

namespace imgtool::builder {

std::string repository_of(const std::string& image) {
  std::string r = image.substr(0, image.find('@'));
  auto slash = r.rfind('/'), colon = r.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) r.erase(colon);
  for (const char* prefix : {"docker.io/", "index.docker.io/"})
    if (r.rfind(prefix, 0) == 0) r.erase(0, std::string(prefix).size());
  if (r.rfind("library/", 0) == 0 && r.find('/', 8) == std::string::npos) r.erase(0, 8);
  return r;
}

std::string registry_digest(const std::string& image) {
  image::Reference r = image::parse_engine_name(image);
  if (!r.digest.empty()) return r.digest;
  image::RegistryOptions o;  // one try, 15 s a request: a registry out of reach costs a run seconds, not minutes
  o.attempts = 1;
  o.request_timeout = std::chrono::seconds(15);
  return image::Registry(r.host, o).resolve(r.name, r.tag);
}

namespace {

struct Pin {
  std::string id, from;  // Cell::base_id, Cell::base_from
};

// What the registry gives `image`'s tag now, for a base the engine lacks, with its line (none: no
// registry to ask, or it did not answer, or answered no sha256 digest).
std::optional<Pin> ask_registry(const RegistryDigest& registry, const std::string& image,
                                std::vector<std::string>& lines) {
  if (!registry) return std::nullopt;
  std::string digest;
  try {
    digest = registry(image);
  } catch (const Error& e) {  // the build pulls the tag, as before, and meets the same registry
    lines.push_back("base " + image + ": not pinned, the engine lacks it and the registry did not answer: " + e.what());
    return std::nullopt;
  }
  if (!is_sha256_digest(digest)) {
    lines.push_back("base " + image +
                    ": not pinned, the registry's answer is no sha256:<64 hex> digest");  // not echoed
    return std::nullopt;
  }
  lines.push_back("base " + image + ": registry digest " + digest +
                  " (asked the registry: the engine lacks it; the build pulls it by digest)");
  return Pin{"", image.substr(0, image.find('@')) + "@" + digest};
}

// What the engine holds under `image` now, as a pin, with its line (none: the engine has no such
// image or does not answer).
std::optional<Pin> resolve(engine::Engine& engine, const RegistryDigest& registry, const std::string& image,
                           std::vector<std::string>& lines) {
  std::optional<engine::ImageInfo> info;
  try {
    info = engine.inspect(image);
  } catch (const Error& e) {  // the run goes on: each cell's build meets the engine and fails alone
    lines.push_back("base " + image + ": not pinned, the engine did not answer: " + e.what());
    return std::nullopt;
  }
  if (!info) return ask_registry(registry, image, lines);
  const std::string repo = repository_of(image);
  for (const auto& rd : info->repo_digests) {
    auto at = rd.find('@');
    // The engine's word goes into FROM: a digest that is not sha256:<64 hex> pins nothing.
    if (at == std::string::npos || repository_of(rd.substr(0, at)) != repo || !is_sha256_digest(rd.substr(at + 1)))
      continue;
    lines.push_back("base " + image + ": registry digest " + rd.substr(at + 1) + " (image ID " + info->id + ")");
    return Pin{info->id, image.substr(0, image.find('@')) + "@" + rd.substr(at + 1)};
  }
  if (engine.builder_kind() == "buildkit") {
    lines.push_back("base " + image + ": image ID " + info->id +
                    " (made here); FROM keeps the tag: BuildKit cannot build FROM an image ID (moby/buildkit#2204)");
    return Pin{info->id, ""};
  }
  lines.push_back("base " + image + ": image ID " + info->id + " (made here, no registry digest)");
  return Pin{info->id, info->id};
}

bool tag_only_warning(const matrix::Cell& c, const std::string& w) {
  return w.rfind("base image " + c.base_image + " is tag-only", 0) == 0;
}

}  // namespace

std::vector<std::string> pin_bases(matrix::Plan& plan, engine::Engine& engine, const RegistryDigest& registry) {
  std::map<std::string, std::optional<Pin>> seen;
  std::vector<std::string> lines;
  for (auto& c : plan.kept) {
    if (!c.base_digest.empty() || !c.base_id.empty()) continue;
    auto [it, fresh] = seen.try_emplace(c.base_image);
    if (fresh) it->second = resolve(engine, registry, c.base_image, lines);
    if (!it->second) continue;
    c.base_id = it->second->id;
    c.base_from = it->second->from;
    if (!c.base_from.empty()) std::erase_if(c.warnings, [&](const std::string& w) { return tag_only_warning(c, w); });
  }
  return lines;
}

}  // namespace imgtool::builder
