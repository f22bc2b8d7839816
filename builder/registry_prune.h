// `imgtool prune`, the registry half: per repository, the dated nightly tags
// (builder/nightly_tag.h) beyond the newest `keep` of each cell go, with their
// manifest and its cosign-scheme signature (`sha256-<hex>.sig`) and attestation
// (`sha256-<hex>.att`).
//
// Rule (plan_registry_prune, a pure function of the tag → digest listing):
//   - a cell's nightly tags are ordered by their date part (YYYYMMDD, newest
//     first) — the date the nightly published, known without reading a
//     config; the newest `keep` stay;
//   - an older nightly tag's digest is deleted only when EVERY tag naming it
//     goes too: a digest also named by a release tag (any tag that is not a
//     nightly tag and not a .sig/.att) or by a kept nightly tag stays, and the
//     old tag is reported as kept with the tag that holds it (a manifest
//     DELETE would take every tag of the digest with it; tag-only deletes are
//     not in the distribution spec registries here implement);
//   - the .sig/.att of a deleted digest go with it (only those the tag list holds).
// Order per digest: .sig, .att, then the manifest, so a run cut short leaves
// at worst an unsigned old nightly tag that the next prune removes — never a
// signature of a digest no tag names any more. A registry that refuses
// deletes (HTTP 405: docker-registry without `storage: delete: enabled: true`)
// ends the run with one line naming that fix.
#pragma once
#include <string>
#include <vector>

#include "builder/prune.h"
#include "image/registry.h"

namespace imgtool::builder {

struct TagDigest {
  std::string tag;
  std::string digest;  // "sha256:…" the tag names; "" for .sig/.att tags (not read)
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
  std::vector<DigestDeletion> deletions;  // oldest first within a cell
  std::vector<PruneItem> kept;            // old nightly tags whose digest another tag holds
};

// True for the cosign tag scheme "sha256-<64 hex>.sig" / ".att".
bool is_signature_tag(const std::string& tag);

// InputError unless keep >= 1 (the CLI checks --keep before any request).
void check_keep(int keep);

// The rule above; InputError unless keep >= 1.
RegistryPrunePlan plan_registry_prune(const std::vector<TagDigest>& tags, int keep);

// The plan as report items ("REPO:TAG", "REPO@sha256:…").
std::vector<PruneItem> plan_items(const std::string& repo, const DigestDeletion& d, int keep);

struct RegistryPruneOptions {
  int keep = 0;          // nightly tags kept per cell (>= 1)
  bool dry_run = false;  // list and HEAD only; nothing is deleted
};

// Lists `repo`'s tags, resolves every tag that is not a .sig/.att (one HEAD
// each), plans, and (unless dry_run) deletes. A failing delete is recorded on
// its item and the rest of that digest is skipped; a 405 throws imgtool::Error.
PruneReport prune_repository(image::Registry& reg, const std::string& repo, const RegistryPruneOptions& o);

}  // namespace imgtool::builder
