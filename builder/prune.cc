#include "builder/prune.h"

#include <algorithm>
#include <set>

#include "matrix/labels.h"

namespace imgtool::builder {
namespace {

using engine::ImageInfo;

constexpr std::string_view kStagePrefix = "imgtool-stage/";

std::string label_of(const ImageInfo& i, const char* key) {
  auto it = i.labels.find(key);
  return it == i.labels.end() ? "" : it->second;
}

std::string short_id(const std::string& id) { return id.substr(0, std::min<size_t>(id.size(), 19)); }

// What the named cell images need: their stage keys, and for those built
// before the stage-key label, their tags (matched against stage-of).
struct Needed {
  std::set<std::string> keys, legacy_tags;
  explicit Needed(const std::vector<ImageInfo>& cells) {
    for (const auto& c : cells) {
      if (c.repo_tags.empty()) continue;
      std::string key = label_of(c, labels::kStageKey);
      if (!key.empty())
        keys.insert(key);
      else
        legacy_tags.insert(label_of(c, labels::kTag));
    }
  }
};

// The stage key of a stage image: its label, else the <key> of imgtool-stage/<key>:<stage>.
std::string stage_key_of(const ImageInfo& s) {
  if (std::string k = label_of(s, labels::kStageKey); !k.empty()) return k;
  for (const auto& t : s.repo_tags)
    if (t.rfind(kStagePrefix, 0) == 0) return t.substr(kStagePrefix.size(), t.find(':') - kStagePrefix.size());
  return "";
}

void plan_stage(const ImageInfo& s, const Needed& need, std::vector<PruneItem>& out) {
  if (s.repo_tags.empty()) {
    out.push_back({PruneKind::dangling_image, s.id,
                   "shared stage of " + label_of(s, labels::kStageOf) + "'s group, rebuilt since", ""});
    return;
  }
  std::string key = stage_key_of(s);
  if (need.keys.count(key) || need.legacy_tags.count(label_of(s, labels::kStageOf))) return;
  for (const auto& t : s.repo_tags)
    if (t.rfind(kStagePrefix, 0) == 0)
      out.push_back({PruneKind::stage_image, t,
                     "no tagged cell image was built on stage " + key + " (" + short_id(s.id) + ")", ""});
}

}  // namespace

std::string to_string(PruneKind k) {
  switch (k) {
    case PruneKind::stage_image:
      return "stage-image";
    case PruneKind::dangling_image:
      return "dangling-image";
    case PruneKind::nightly_tag:
      return "nightly-tag";
    case PruneKind::manifest:
      return "manifest";
    case PruneKind::signature:
      return "signature";
    case PruneKind::attestation:
      return "attestation";
    case PruneKind::layer_cache:
      return "layer-cache";
  }
  return "?";
}

bool PruneReport::ok() const {
  return std::none_of(removed.begin(), removed.end(), [](const PruneItem& i) { return !i.error.empty(); });
}

void PruneReport::append(PruneReport other) {
  for (auto& i : other.removed) removed.push_back(std::move(i));
  for (auto& i : other.kept) kept.push_back(std::move(i));
}

std::string render_text(const PruneReport& r) {
  std::string out;
  for (const auto& i : r.removed) {
    std::string verb = !i.error.empty() ? "FAILED to remove" : r.dry_run ? "would remove" : "removed";
    out += verb + " " + to_string(i.kind) + " " + i.what + " (" + i.reason + ")" +
           (i.error.empty() ? "" : ": " + i.error) + "\n";
  }
  for (const auto& i : r.kept) out += "kept " + to_string(i.kind) + " " + i.what + " (" + i.reason + ")\n";
  if (r.removed.empty()) out += "nothing to prune\n";
  return out;
}

nlohmann::json to_json(const PruneReport& r) {
  auto items = [](const std::vector<PruneItem>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& i : v) {
      nlohmann::json j = {{"kind", to_string(i.kind)}, {"what", i.what}, {"reason", i.reason}};
      if (!i.error.empty()) j["error"] = i.error;
      a.push_back(j);
    }
    return a;
  };
  return {{"dry_run", r.dry_run}, {"ok", r.ok()}, {"removed", items(r.removed)}, {"kept", items(r.kept)}};
}

std::vector<PruneItem> plan_engine_prune(const std::vector<ImageInfo>& cell_images,
                                         const std::vector<ImageInfo>& stage_images,
                                         const std::vector<ImageInfo>& build_stages) {
  std::vector<PruneItem> out;
  Needed need(cell_images);
  for (const auto& s : stage_images) plan_stage(s, need, out);
  for (const auto& c : cell_images)
    if (c.repo_tags.empty())
      out.push_back({PruneKind::dangling_image, c.id,
                     "cell image of " + label_of(c, labels::kTag) + ", its tag moved to a newer build", ""});
  for (const auto& b : build_stages)
    if (b.repo_tags.empty() && label_of(b, labels::kStageOf).empty())
      out.push_back(
          {PruneKind::dangling_image, b.id, "untagged first stage of a cell build (--keep-stages or failed)", ""});
  return out;
}

PruneReport prune_engine(engine::Engine& docker, bool dry_run) {
  PruneReport rep;
  rep.dry_run = dry_run;
  rep.removed = plan_engine_prune(docker.list_images({.labels = {labels::kTag}}),
                                  docker.list_images({.labels = {labels::kStageOf}}),
                                  docker.list_images({.labels = {labels::kBuildStage}, .dangling = true}));
  if (dry_run) return rep;
  for (auto& item : rep.removed) {
    try {
      if (!docker.remove(item.what)) item.reason += "; already gone";
    } catch (const std::exception& e) {
      item.error = e.what();
    }
  }
  return rep;
}

}  // namespace imgtool::builder
