#include "nightly/registry_prune.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/error.h"
#include "image/platform.h"
#include "nightly/nightly_tag.h"
#include "sign/attestation.h"
#include "sign/sig_manifest.h"

namespace imgtool::nightly {
namespace {

struct Nightly {
  NightlyTag parts;
  std::string tag, digest;
};

// Each cell's nightly tags, newest first; ties (cannot happen for one tag name) by tag.
std::map<std::string, std::vector<Nightly>> nightlies_by_cell(const std::vector<TagDigest>& tags) {
  std::map<std::string, std::vector<Nightly>> by_cell;
  for (const auto& t : tags)
    if (auto n = parse_nightly_tag(t.tag); n && !t.digest.empty()) by_cell[n->cell].push_back({*n, t.tag, t.digest});
  for (auto& [cell, v] : by_cell)
    std::sort(v.begin(), v.end(), [](const Nightly& a, const Nightly& b) {
      return a.parts.date != b.parts.date ? a.parts.date > b.parts.date : a.tag > b.tag;
    });
  return by_cell;
}

// The first tag that is not going and holds `digest` — names it, or names an index listing it —
// preferring a release tag; "" when none does.
std::string holder_of(const std::string& digest, const std::vector<TagDigest>& tags,
                      const std::set<std::string>& going) {
  std::string nightly;
  for (const auto& t : tags) {
    bool child = std::find(t.children.begin(), t.children.end(), digest) != t.children.end();
    if ((t.digest != digest && !child) || going.count(t.tag)) continue;
    std::string how = child ? " (an index listing it)" : "";
    if (!parse_nightly_tag(t.tag)) return "release tag " + t.tag + how;
    if (nightly.empty()) nightly = "kept nightly tag " + t.tag + how;
  }
  return nightly;
}

// HEAD's Content-Type says index (or says nothing): the manifest is read to list its children.
bool may_be_index(std::string media_type) {
  media_type = media_type.substr(0, media_type.find(';'));
  return media_type.empty() || media_type == image::media::kOciIndex || media_type == image::media::kDockerList;
}

// The manifests an index lists (empty for an image manifest); one GET per digest, kept in `seen`.
const std::vector<std::string>& children_of(image::Registry& reg, const std::string& repo, const std::string& digest,
                                            std::map<std::string, std::vector<std::string>>& seen) {
  auto [it, fresh] = seen.emplace(digest, std::vector<std::string>{});
  if (!fresh) return it->second;
  image::Manifest m = reg.get_manifest(repo, digest);  // by digest: re-hashed
  if (!image::is_index(m)) return it->second;
  for (const auto& c : m.json().value("manifests", nlohmann::json::array()))
    if (c.is_object() && c.contains("digest") && c["digest"].is_string())
      it->second.push_back(c["digest"].get<std::string>());
  return it->second;
}

// Runs one registry call of a deletion; a 405 ends the whole run with the fix.
template <typename F>
void registry_step(image::Registry& reg, F&& step) {
  try {
    step();
  } catch (const image::RegistryError& e) {
    if (e.status != 405) throw;
    throw Error("registry " + reg.host() + " refuses deletes (HTTP 405" + (e.code.empty() ? "" : " " + e.code) +
                "); fix: enable them in its config (docker-registry: storage: delete: enabled: true) and restart it");
  }
}

// Deletes the manifest a tag names (a .sig or .att), if the tag is still there.
void delete_tagged(image::Registry& reg, const std::string& repo, const std::string& tag) {
  registry_step(reg, [&] {
    if (auto mi = reg.head_manifest(repo, tag)) reg.delete_manifest(repo, mi->digest);
  });
}

// One digest's items in order; the first failure marks the rest as skipped.
void apply_deletion(image::Registry& reg, const std::string& repo, const DigestDeletion& d,
                    std::vector<builder::PruneItem>& items) {
  std::string failed;
  for (auto& item : items) {
    if (!failed.empty()) {
      item.error = "not removed: " + failed;
      continue;
    }
    try {
      if (item.kind == builder::PruneKind::signature) delete_tagged(reg, repo, sign::signature_tag(d.digest));
      if (item.kind == builder::PruneKind::attestation) delete_tagged(reg, repo, sign::attestation_tag(d.digest));
      if (item.kind == builder::PruneKind::manifest) registry_step(reg, [&] { reg.delete_manifest(repo, d.digest); });
    } catch (const image::RegistryError& e) {
      item.error = e.what();
      failed = "removing " + to_string(item.kind) + " " + item.what + " failed";
    }
  }
}

}  // namespace

bool is_signature_tag(const std::string& tag) {
  if (tag.size() != 7 + 64 + 4 || tag.rfind("sha256-", 0) != 0) return false;
  std::string ext = tag.substr(7 + 64);
  bool hex = std::all_of(tag.begin() + 7, tag.begin() + 7 + 64,
                         [](unsigned char c) { return std::isdigit(c) || (c >= 'a' && c <= 'f'); });
  return hex && (ext == ".sig" || ext == ".att");
}

void check_keep(int keep) {
  if (keep < 1)
    throw InputError("prune: expected --keep N with N >= 1 (nightly tags kept per cell), found " +
                     std::to_string(keep));
}

RegistryPrunePlan plan_registry_prune(const std::vector<TagDigest>& tags, int keep) {
  check_keep(keep);
  std::set<std::string> present, going;
  for (const auto& t : tags) present.insert(t.tag);
  std::vector<Nightly> old;
  for (auto& [cell, v] : nightlies_by_cell(tags))
    for (size_t i = v.size(); i > static_cast<size_t>(keep); --i) {  // oldest first
      old.push_back(v[i - 1]);
      going.insert(v[i - 1].tag);
    }
  RegistryPrunePlan plan;
  plan.keep = keep;
  plan.going = going;
  std::map<std::string, size_t> index;  // digest -> deletions[i]
  for (auto it = old.begin(); it != old.end(); ++it) {
    if (std::string h = holder_of(it->digest, tags, going); !h.empty()) {
      plan.kept.push_back({builder::PruneKind::nightly_tag, it->tag,
                           "older than the newest " + std::to_string(keep) + " of " + it->parts.cell +
                               ", but its digest is also named by " + h,
                           ""});
      continue;
    }
    auto [pos, fresh] = index.emplace(it->digest, plan.deletions.size());
    if (fresh)
      plan.deletions.push_back({it->digest,
                                it->parts.cell,
                                {},
                                present.count(sign::signature_tag(it->digest)) > 0,
                                present.count(sign::attestation_tag(it->digest)) > 0});
    plan.deletions[pos->second].tags.push_back(it->tag);
  }
  return plan;
}

std::vector<builder::PruneItem> plan_items(const std::string& repo, const DigestDeletion& d, int keep) {
  std::vector<builder::PruneItem> items;
  std::string why = "older than the newest " + std::to_string(keep) + " nightly tags of " + d.cell;
  for (const auto& t : d.tags)
    items.push_back({builder::PruneKind::nightly_tag, repo + ":" + t, why + "; goes with its manifest", ""});
  if (d.signature)
    items.push_back(
        {builder::PruneKind::signature, repo + ":" + sign::signature_tag(d.digest), "signs " + d.digest, ""});
  if (d.attestation)
    items.push_back(
        {builder::PruneKind::attestation, repo + ":" + sign::attestation_tag(d.digest), "attests " + d.digest, ""});
  items.push_back({builder::PruneKind::manifest, repo + "@" + d.digest, why + "; no other tag names it", ""});
  return items;
}

std::vector<TagDigest> scan_repository(image::Registry& reg, const std::string& repo) {
  std::vector<TagDigest> tags;
  std::map<std::string, std::vector<std::string>> indexes;
  for (const auto& t : reg.list_tags(repo)) {
    if (is_signature_tag(t)) {
      tags.push_back({t, ""});
    } else if (auto mi = reg.head_manifest(repo, t)) {  // a tag gone since the listing is skipped
      tags.push_back({t, mi->digest});
      if (may_be_index(mi->media_type)) tags.back().children = children_of(reg, repo, mi->digest, indexes);
    }
  }
  return tags;
}

builder::PruneReport apply_registry_prune(image::Registry& reg, const std::string& repo,
                                          const RegistryPrunePlan& plan) {
  builder::PruneReport rep;
  for (auto k : plan.kept) {
    k.what = repo + ":" + k.what;
    rep.kept.push_back(std::move(k));
  }
  for (const auto& d : plan.deletions) {
    if (std::string h = holder_of(d.digest, scan_repository(reg, repo), plan.going); !h.empty()) {
      for (const auto& t : d.tags)
        rep.kept.push_back({builder::PruneKind::nightly_tag, repo + ":" + t,
                            "older than the newest " + std::to_string(plan.keep) + " of " + d.cell +
                                ", but re-tagged meanwhile: its digest is now also named by " + h,
                            ""});
      continue;
    }
    auto items = plan_items(repo, d, plan.keep);
    apply_deletion(reg, repo, d, items);
    for (auto& i : items) rep.removed.push_back(std::move(i));
  }
  return rep;
}

builder::PruneReport prune_repository(image::Registry& reg, const std::string& repo, const RegistryPruneOptions& o) {
  check_keep(o.keep);  // before any request
  RegistryPrunePlan plan = plan_registry_prune(scan_repository(reg, repo), o.keep);
  if (!o.dry_run) return apply_registry_prune(reg, repo, plan);
  builder::PruneReport rep;
  rep.dry_run = true;
  for (auto& k : plan.kept) rep.kept.push_back({k.kind, repo + ":" + k.what, k.reason, ""});
  for (const auto& d : plan.deletions)
    for (auto& i : plan_items(repo, d, o.keep)) rep.removed.push_back(std::move(i));
  return rep;
}

}  // namespace imgtool::nightly
