// `imgtool prune`'s registry rule without a network: dated nightly tags and the
// plan over tag listings. Against a real docker-registry: prune_registry_test.cc.
#include "nightly/registry_prune.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "core/error.h"
#include "core/hash.h"
#include "nightly/nightly_tag.h"
#include "sign/attestation.h"
#include "sign/sig_manifest.h"

using namespace imgtool;
using namespace imgtool::nightly;
using imgtool::builder::PruneItem;
using imgtool::builder::PruneKind;

namespace {

std::vector<std::string> whats(const std::vector<PruneItem>& items, PruneKind k) {
  std::vector<std::string> v;
  for (const auto& i : items)
    if (i.kind == k) v.push_back(i.what);
  std::sort(v.begin(), v.end());
  return v;
}

std::string digest_of(const std::string& name) { return sha256_digest(name); }

}  // namespace

TEST_CASE("nightly tags: <cell>-nightly-<YYYYMMDD>, anything else is not one") {
  CHECK(nightly_tag("3.0.0-gpu-cuda12.6-cudnn9.5", "20261123") == "3.0.0-gpu-cuda12.6-cudnn9.5-nightly-20261123");
  auto n = parse_nightly_tag("3.0.0-gpu-cuda12.6-cudnn9.5-nightly-20261123");
  REQUIRE(n);
  CHECK(n->cell == "3.0.0-gpu-cuda12.6-cudnn9.5");
  CHECK(n->date == "20261123");
  CHECK_FALSE(parse_nightly_tag("3.0.0-gpu-cuda12.6-cudnn9.5"));
  CHECK_FALSE(parse_nightly_tag("3.0.0-nightly-2026112"));
  CHECK_FALSE(parse_nightly_tag("-nightly-20261123"));
  CHECK_THROWS_AS(nightly_tag("3.0.0", "2026-11-23"), InputError);
  CHECK(is_signature_tag(sign::signature_tag(digest_of("x"))));
  CHECK(is_signature_tag(sign::attestation_tag(digest_of("x"))));
  CHECK_FALSE(is_signature_tag("sha256-abc.sig"));
}

TEST_CASE("registry plan: keep N per cell by date; never a digest a release or a kept tag names; .sig/.att go along") {
  std::string d1 = digest_of("a1"), d2 = digest_of("a2"), d3 = digest_of("a3"), e1 = digest_of("b1"),
              e2 = digest_of("b2");
  std::vector<TagDigest> tags = {{"3.2.0-nightly-20261120", d1},
                                 {"3.2.0-nightly-20261122", d3},
                                 {"3.2.0-nightly-20261121", d2},
                                 {"3.2.0", d3},  // the moving cell tag
                                 {"3.1.9", d1},  // a release names the oldest
                                 {"3.2.0-gpu-nightly-20261121", e1},
                                 {"3.2.0-gpu-nightly-20261122", e2},
                                 {"3.2.0-gpu-nightly-20261120", e2},
                                 {sign::signature_tag(d2), ""},
                                 {sign::attestation_tag(d2), ""},
                                 {sign::signature_tag(e1), ""}};
  RegistryPrunePlan p = plan_registry_prune(tags, 1);
  REQUIRE(p.deletions.size() == 2);
  CHECK(p.deletions[0].digest == d2);
  CHECK(p.deletions[0].tags == std::vector<std::string>{"3.2.0-nightly-20261121"});
  CHECK(p.deletions[0].signature);
  CHECK(p.deletions[0].attestation);
  CHECK(p.deletions[1].digest == e1);
  CHECK(p.deletions[1].signature);
  CHECK_FALSE(p.deletions[1].attestation);
  CHECK(whats(p.kept, PruneKind::nightly_tag) ==
        std::vector<std::string>{"3.2.0-gpu-nightly-20261120", "3.2.0-nightly-20261120"});
  for (const auto& k : p.kept)
    CHECK(k.reason.find(k.what == "3.2.0-nightly-20261120"
                            ? "release tag 3.1.9"
                            : "kept nightly tag 3.2.0-gpu-nightly-20261122") != std::string::npos);
  auto items = plan_items("ai/paddle", p.deletions[0], 1);
  REQUIRE(items.size() == 4);  // tag, .sig, .att, then the manifest
  CHECK(items.back().what == "ai/paddle@" + d2);
  CHECK(plan_registry_prune(tags, 3).deletions.empty());
  CHECK_THROWS_AS(plan_registry_prune(tags, 0), InputError);
}

TEST_CASE("registry plan: a manifest an index lists is held by the tag naming the index") {
  std::string d1 = digest_of("a1"), d2 = digest_of("a2"), idx = digest_of("index");
  std::vector<TagDigest> tags = {
      {"3.2.0-nightly-20261120", d1}, {"3.2.0-nightly-20261121", d2}, {"3.2.0", idx, {d1, digest_of("arm64")}}};
  RegistryPrunePlan p = plan_registry_prune(tags, 1);
  CHECK(p.deletions.empty());
  REQUIRE(p.kept.size() == 1);
  CHECK(p.kept[0].reason.find("release tag 3.2.0 (an index listing it)") != std::string::npos);
  // an index that is itself going (an old nightly tag) holds nothing
  tags[2].tag = "3.2.0-nightly-20261119";
  CHECK(plan_registry_prune(tags, 1).deletions.size() == 2);
}
