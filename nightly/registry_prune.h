// `imgtool prune`, the registry half: per repository, the dated nightly tags
// (nightly/nightly_tag.h) beyond the newest `keep` of each cell go, with their
// manifest and its cosign-scheme signature (`sha256-<hex>.sig`) and attestation
// (`sha256-<hex>.att`).
//
// Rule (plan_registry_prune, a pure function of the tag → digest listing):
//   - a cell's nightly tags are ordered by their date part (YYYYMMDD, newest
//     first) — the date the nightly published, known without reading a
//     config; the newest `keep` stay;
//   - an older nightly tag's digest is deleted only when EVERY tag holding it
//     goes too: a digest also named by a release tag (any tag that is not a
//     nightly tag and not a .sig/.att) or by a kept nightly tag — or listed by
//     an index such a tag names (a platform manifest of a multi-arch release) —
//     stays, and the old tag is reported as kept with its holder (a manifest
//     DELETE would take every tag of the digest with it; tag-only deletes are
//     not in the distribution spec registries here implement);
//   - the .sig/.att of a deleted digest go with it (only those the tag list holds).
// Order per digest: .sig, .att, then the manifest, so a run cut short leaves
// at worst an unsigned old nightly tag that the next prune removes — never a
// signature of a digest no tag names any more. A registry that refuses
// deletes (HTTP 405: docker-registry without `storage: delete: enabled: true`)
// ends the run with one line naming that fix. Fail closed: a tag list that is
// not whole is an error (nothing is planned from part of one), and every digest
// is re-checked right before its deletes (apply_registry_prune).
#pragma once
#include <set>
#include <string>
#include <vector>

#include "builder/prune.h"
#include "image/registry.h"

namespace imgtool::nightly {

struct TagDigest {
  std::string tag;
  std::string digest;                 // "sha256:…" the tag names; "" for .sig/.att tags (not read)
  std::vector<std::string> children;  // the manifests it lists when `digest` is an index
};

// One image manifest to delete and what goes with it.
struct DigestDeletion {
  std::string digest;
  std::string cell;
  std::vector<std::string> tags;  // the old nightly tags naming it (all of its tags)
  bool signature = false;         // the tag list holds sha256-<hex>.sig
  bool attestation = false;       // … and sha256-<hex>.att
};

struct RegistryPrunePlan {
  int keep = 0;
  std::vector<DigestDeletion> deletions;  // oldest first within a cell
  std::vector<builder::PruneItem> kept;   // old nightly tags whose digest another tag holds
  std::set<std::string> going;            // every old nightly tag (beyond the newest `keep`)
};

// True for the cosign tag scheme "sha256-<64 hex>.sig" / ".att".
bool is_signature_tag(const std::string& tag);

// InputError unless keep >= 1 (the CLI checks --keep before any request).
void check_keep(int keep);

// The rule above; InputError unless keep >= 1.
RegistryPrunePlan plan_registry_prune(const std::vector<TagDigest>& tags, int keep);

// The plan as report items ("REPO:TAG", "REPO@sha256:…").
std::vector<builder::PruneItem> plan_items(const std::string& repo, const DigestDeletion& d, int keep);

struct RegistryPruneOptions {
  int keep = 0;          // nightly tags kept per cell (>= 1)
  bool dry_run = false;  // list and HEAD only; nothing is deleted
};

// `repo`'s tags, each that is not a .sig/.att resolved (one HEAD; a tag gone since the listing
// is left out), and an index's children read (one GET per index digest). Throws when the
// listing fails (image::Registry::list_tags: whole or an error) — prune fails closed.
std::vector<TagDigest> scan_repository(image::Registry& reg, const std::string& repo);

// Deletes what `plan` (made from an earlier scan) lets go; the report's items name "REPO:TAG"
// and "REPO@sha256:…". The plan may be stale (a `promote` of an old nightly digest — the
// rollback the dated tags exist for — may land meanwhile; registries have no compare-and-swap),
// so RIGHT BEFORE each digest's deletes the repository is scanned again (list + one HEAD per
// tag: the cost of not deleting a release) and the digest is skipped, its tags reported kept
// "re-tagged meanwhile", when a tag outside plan.going now holds it. What is left is the window
// of its own three DELETEs. A failing delete is recorded on its item and the rest of that digest
// is skipped; a 405 throws imgtool::Error; a failing re-scan throws (nothing more is deleted).
builder::PruneReport apply_registry_prune(image::Registry& reg, const std::string& repo, const RegistryPrunePlan& plan);

// scan_repository, plan_registry_prune, and (unless dry_run) apply_registry_prune.
builder::PruneReport prune_repository(image::Registry& reg, const std::string& repo, const RegistryPruneOptions& o);

}  // namespace imgtool::nightly
