// `imgtool prune docker://HOST/REPO --keep N` against a REAL docker-registry
// (tests/registry_fixture.h, loopback): dated nightly tags of two cells, a
// release tag on an old nightly digest, every digest signed (.sig) and attested
// (.att) by the real signer. --dry-run deletes nothing; the real run removes
// exactly the old nightly manifests with their .sig/.att; a registry with
// deletes disabled (405) fails with one line naming the fix; a digest promoted
// meanwhile or listed by a release's index stays; a tag list that breaks
// (image/testing/hostile_registry.py) deletes nothing.
// --no-engine: these tests never touch this host's Docker engine.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "core/fs.h"
#include "image/reference.h"
#include "image/registry.h"
#include "image/registry_repository.h"
#include "image/testing/python_server.h"
#include "nightly/nightly_tag.h"
#include "nightly/registry_prune.h"
#include "sign/attestation.h"
#include "sign/keys.h"
#include "sign/sig_manifest.h"
#include "sign/sign_image.h"
#include "tests/fixtures.h"
#include "tests/registry_fixture.h"

using namespace imgtool;
using namespace imgtool::testing;
using nlohmann::json;

namespace {

const std::string kRepo = "ai/paddle";

// A tiny image (one opaque layer, a config naming `which`) pushed by digest, then
// signed and attested with `key`; returns its digest.
std::string push_signed(image::Registry& reg, EVP_PKEY& key, const std::string& which) {
  auto layer = reg.put_blob(kRepo, "layer of " + which, image::media::kOciLayerGzip);
  auto config = reg.put_blob(kRepo,
                             json{{"architecture", "amd64"},
                                  {"os", "linux"},
                                  {"config", {{"Labels", {{"which", which}}}}},
                                  {"rootfs", {{"type", "layers"}, {"diff_ids", json::array()}}}}
                                 .dump(),
                             image::media::kOciConfig);
  json m{{"schemaVersion", 2}, {"mediaType", image::media::kOciManifest}, {"config", config}, {"layers", {layer}}};
  image::Manifest man{m.dump(), image::media::kOciManifest};
  reg.put_manifest(kRepo, man.digest(), man.raw, man.media_type);
  image::RegistryRepository repo(reg, kRepo);
  sign::sign_digest(repo, key, {.manifest_digest = man.digest(), .identity = reg.host() + "/" + kRepo});
  sign::attach_attestation(repo, key,
                           {.manifest_digest = man.digest(),
                            .predicate_type = sign::kSpdxPredicateType,
                            .predicate = {{"spdxVersion", "SPDX-2.3"}, {"name", which}}});
  return man.digest();
}

void tag(image::Registry& reg, const std::string& digest, const std::string& t) {
  image::Manifest m = reg.get_manifest(kRepo, digest);
  reg.put_manifest(kRepo, t, m.raw, m.media_type);
}

std::set<std::string> tags_of(image::Registry& reg) {
  auto v = reg.list_tags(kRepo);
  return {v.begin(), v.end()};
}

std::string sig(const std::string& d) { return sign::signature_tag(d); }
std::string att(const std::string& d) { return sign::attestation_tag(d); }

RunResult prune(const std::vector<std::string>& args) {
  std::vector<std::string> a = {"prune"};
  a.insert(a.end(), args.begin(), args.end());
  RunResult r = imgtool::testing::imgtool(a);
  MESSAGE("imgtool prune -> " << r.exit_code << "\n" << r.out << r.err);
  return r;
}

// Cell "3.2.0": nightlies a1 (20261120, also the release tag 3.2.0-release), a2, a3;
// cell "3.2.0-gpu": b1, b2. Every digest signed and attested.
struct Nightlies {
  RegistryServer server;
  image::Registry reg;
  sign::Pkey key = sign::generate_key();
  std::string a1, a2, a3, b1, b2;
  explicit Nightlies(bool allow_delete = true)
      : server(RegistryServer::Mode::kHttp, "prune", "", allow_delete), reg(server.host(), server.options()) {
    a1 = push_signed(reg, *key, "a1");
    a2 = push_signed(reg, *key, "a2");
    a3 = push_signed(reg, *key, "a3");
    b1 = push_signed(reg, *key, "b1");
    b2 = push_signed(reg, *key, "b2");
    tag(reg, a1, nightly::nightly_tag("3.2.0", "20261120"));
    tag(reg, a2, nightly::nightly_tag("3.2.0", "20261121"));
    tag(reg, a3, nightly::nightly_tag("3.2.0", "20261122"));
    tag(reg, a1, "3.2.0-release");
    tag(reg, b1, nightly::nightly_tag("3.2.0-gpu", "20261121"));
    tag(reg, b2, nightly::nightly_tag("3.2.0-gpu", "20261122"));
  }
  std::string ref() const { return image::parse_namespace(server.host()).under(kRepo).str(); }
};

}  // namespace

TEST_CASE("prune --keep 1: old nightly manifests go with their .sig/.att; the release's digest and the newest stay") {
  Nightlies n;
  const std::set<std::string> all = tags_of(n.reg);
  REQUIRE(all.size() == 6 + 10);  // 6 tags + a .sig and an .att per digest

  RunResult dry = prune({n.ref(), "--keep", "1", "--no-engine", "--dry-run"});
  REQUIRE(dry.exit_code == 0);
  CHECK(tags_of(n.reg) == all);  // nothing deleted
  CHECK(n.reg.head_manifest(kRepo, n.a2));
  CHECK(dry.out.find("would remove manifest " + kRepo + "@" + n.a2) != std::string::npos);
  CHECK(dry.out.find("would remove signature " + kRepo + ":" + sig(n.b1)) != std::string::npos);
  CHECK(dry.out.find("kept nightly-tag " + kRepo + ":3.2.0-nightly-20261120") != std::string::npos);

  RunResult json_run = prune({n.ref(), "--keep", "1", "--no-engine", "--dry-run", "--json"});
  REQUIRE(json_run.exit_code == 0);
  json j = json::parse(json_run.out);
  CHECK(j["dry_run"] == true);
  CHECK(j["removed"].size() == 8);  // per digest (a2, b1): tag, .sig, .att, manifest

  RunResult real = prune({n.ref(), "--keep", "1", "--no-engine"});
  REQUIRE(real.exit_code == 0);
  std::set<std::string> expected = {"3.2.0-nightly-20261120",
                                    "3.2.0-nightly-20261122",
                                    "3.2.0-release",
                                    "3.2.0-gpu-nightly-20261122",
                                    sig(n.a1),
                                    att(n.a1),
                                    sig(n.a3),
                                    att(n.a3),
                                    sig(n.b2),
                                    att(n.b2)};
  CHECK(tags_of(n.reg) == expected);
  CHECK_FALSE(n.reg.head_manifest(kRepo, n.a2));
  CHECK_FALSE(n.reg.head_manifest(kRepo, n.b1));
  CHECK(n.reg.resolve(kRepo, "3.2.0-release") == n.a1);
  CHECK(n.reg.head_manifest(kRepo, n.a3));

  RunResult again = prune({n.ref(), "--keep", "1", "--no-engine"});
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("removed ") == std::string::npos);
  CHECK(tags_of(n.reg) == expected);
}

TEST_CASE("prune against a registry with deletes disabled: one line naming the fix, exit 1") {
  Nightlies n(false);
  const std::set<std::string> all = tags_of(n.reg);
  RunResult r = prune({n.ref(), "--keep", "1", "--no-engine"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("HTTP 405") != std::string::npos);
  CHECK(r.err.find("storage: delete: enabled: true") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(tags_of(n.reg) == all);
}

TEST_CASE("prune: bad --keep and a non-registry reference are refused with exit 2") {
  CHECK(prune({"docker://127.0.0.1:1/ai/paddle", "--keep", "0", "--no-engine"}).exit_code == 2);
  CHECK(prune({"docker://127.0.0.1:1/ai/paddle", "--no-engine"}).exit_code == 2);  // --keep required with a repository
  CHECK(prune({"oci:./layout", "--keep", "1", "--no-engine"}).exit_code == 2);
}

TEST_CASE("prune: a reference with a tag is refused naming the expected form") {
  RunResult r = prune({"docker://127.0.0.1:1/ai/paddle:3.2.0", "--keep", "1", "--no-engine"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("expected a repository docker://HOST/REPO") != std::string::npos);
}

TEST_CASE("prune: a digest promoted between the listing and its deletes stays, with its .sig/.att") {
  // The rollback workflow the dated tags exist for: `promote` of an old nightly digest lands while
  // prune runs. Before, nothing was re-checked before a DELETE: a2 went, and the new release tag
  // with it.
  Nightlies n;
  nightly::RegistryPrunePlan plan = nightly::plan_registry_prune(nightly::scan_repository(n.reg, kRepo), 1);
  REQUIRE(plan.deletions.size() == 2);
  REQUIRE(plan.deletions[0].digest == n.a2);
  tag(n.reg, n.a2, "3.2.0-rollback");  // the promote, after the listing
  builder::PruneReport rep = nightly::apply_registry_prune(n.reg, kRepo, plan);
  CHECK(rep.ok());
  CHECK(n.reg.resolve(kRepo, "3.2.0-rollback") == n.a2);
  CHECK(n.reg.head_manifest(kRepo, sig(n.a2)));
  CHECK(n.reg.head_manifest(kRepo, att(n.a2)));
  CHECK_FALSE(n.reg.head_manifest(kRepo, n.b1));  // the other deletion still happened
  bool reported = false;
  for (auto& k : rep.kept)
    reported |= k.what == kRepo + ":3.2.0-nightly-20261121" &&
                k.reason.find("re-tagged meanwhile") != std::string::npos &&
                k.reason.find("release tag 3.2.0-rollback") != std::string::npos;
  CHECK(reported);
  for (auto& r : rep.removed) CHECK(r.what.find(n.a2.substr(7)) == std::string::npos);
}

TEST_CASE("prune: platform manifests that a release's index lists stay with the index") {
  // Before: only tags naming a digest directly held it; a2 and b1, listed by the multi-platform
  // release index 3.2.0-multi, went with their old nightly tags and left the index broken.
  Nightlies n;
  json manifests = json::array();
  for (const auto& [d, arch] : {std::pair{n.a2, "amd64"}, std::pair{n.b1, "arm64"}})
    manifests.push_back({{"mediaType", image::media::kOciManifest},
                         {"digest", d},
                         {"size", n.reg.get_manifest(kRepo, d).raw.size()},
                         {"platform", {{"os", "linux"}, {"architecture", arch}}}});
  std::string index =
      json{{"schemaVersion", 2}, {"mediaType", image::media::kOciIndex}, {"manifests", manifests}}.dump();
  n.reg.put_manifest(kRepo, "3.2.0-multi", index, image::media::kOciIndex);

  RunResult r = prune({n.ref(), "--keep", "1", "--no-engine"});
  REQUIRE(r.exit_code == 0);
  CHECK(n.reg.head_manifest(kRepo, n.a2));
  CHECK(n.reg.head_manifest(kRepo, n.b1));
  CHECK(n.reg.get_manifest(kRepo, "3.2.0-multi").raw == index);
  CHECK(r.out.find("kept nightly-tag " + kRepo + ":3.2.0-nightly-20261121") != std::string::npos);
  CHECK(r.out.find("release tag 3.2.0-multi (an index listing it)") != std::string::npos);
  CHECK(r.out.find("remove manifest") == std::string::npos);
}

TEST_CASE("prune fails closed: a tag list that breaks on page 2 deletes nothing") {
  // Before: the 404 on page 2 returned page 1 alone, and prune deleted by that partial view (here
  // 3.2.0-nightly-20261120's digest, although page 2 might have named it under a release tag).
  PrivateTempDir dir("imgtool-prune-hostile-");
  ::setenv("DOCKER_CONFIG", (dir / "docker").c_str(), 1);  // no machine credentials take part
  image::testing::HostileRegistry hostile(dir.path(), "pages");
  auto head = [](const std::string& tag, const std::string& digest) {
    return json{{"method", "HEAD"},
                {"path", "^/v2/ai/paddle/manifests/" + tag + "$"},
                {"status", 200},
                {"headers", {{"Docker-Content-Digest", digest}, {"Content-Type", image::media::kOciManifest}}}};
  };
  hostile.script({{"routes",
                   {{{"method", "GET"}, {"path", "^/v2/$"}, {"status", 200}, {"body", "{}"}},
                    {{"method", "GET"},
                     {"path", "^/v2/ai/paddle/tags/list\\?n="},
                     {"status", 200},
                     {"body", R"({"tags":["3.2.0-nightly-20261120","3.2.0-nightly-20261121"]})"},
                     {"headers", {{"Link", R"(</v2/ai/paddle/tags/list?last=3.2.0-nightly-20261121>; rel="next")"}}}},
                    head("3.2.0-nightly-20261120", "sha256:" + std::string(64, '1')),
                    head("3.2.0-nightly-20261121", "sha256:" + std::string(64, '2')),
                    {{"method", "DELETE"}, {"path", "^/"}, {"status", 202}}}}});
  image::RegistryOptions o;
  o.attempts = 1;
  image::Registry reg(hostile.host(), o);
  CHECK_THROWS_WITH_AS(nightly::prune_repository(reg, kRepo, {.keep = 1}), doctest::Contains("page 2"), Error);
  for (auto& r : hostile.requests()) CHECK(r["method"] != "DELETE");
}
