// release/ on in-memory repositories (image/repository.h): publish's order (by digest, signature,
// SBOM, tag last) and its one-scan SBOM; promote within and across repositories, refused for an
// unsigned, unattested or contradicting image; the re-sign of a same-repository promotion
// re-attests the SBOM so `verify --key <release key>` holds on every row.
#include <doctest/doctest.h>

#include <optional>

#include "core/error.h"
#include "core/fs.h"
#include "image/copy.h"
#include "release/promote.h"
#include "release/publish.h"
#include "sbom/inventory.h"
#include "sbom/publish.h"
#include "scan/testing/layers.h"
#include "sign/attestation.h"
#include "sign/check_signature.h"
#include "sign/keys.h"
#include "sign/sig_manifest.h"
#include "sign/sign_image.h"
#include "smoke/evidence.h"
#include "tests/test_dirs.h"
#include "verify/evidence_check.h"
#include "verify/release_gate.h"
#include "verify/sbom_check.h"

using namespace imgtool;
using namespace imgtool::release;
using namespace imgtool::scan::testing;

namespace {

// A CPU Paddle image whose labels claim `paddle_label` and whose layer holds Paddle 3.2.0.
MemorySource cpu_image(const std::string& paddle_label = "3.2.0") {
  return MemorySource(
      config_with({{"io.imgtool.paddle", paddle_label}, {"io.imgtool.python", "3.11"}, {"io.imgtool.variant", "cpu"}}),
      {make_tar(python_paddle_layer("3.11", "paddlepaddle", "3.2.0", "False"), "gzip")});
}

// The image stored by digest in `repo` (as the nightly's push leaves it), signed by `key` when given,
// and its SBOM attested when `attest`.
image::Manifest stored(image::MemoryRepository& repo, MemorySource& src, EVP_PKEY* key = nullptr, bool attest = false) {
  auto dst = repo.destination();
  image::copy_image(src, *dst, "");
  image::Manifest m = src.manifest();
  if (key) sign::sign_digest(repo, *key, {m.digest(), repo.name() + ":nightly", {}});
  if (key && attest) sbom::attest_sbom(repo, src, m, *key);
  return m;
}

std::vector<std::string> writes(image::MemoryRepository& repo) {
  std::vector<std::string> out;
  for (const auto& w : repo.store().log())
    if (w.rfind("manifest", 0) == 0)
      out.push_back(w.find(" tag ") == std::string::npos  ? "digest"
                    : w.find(".sig") != std::string::npos ? "sig"
                    : w.find(".att") != std::string::npos ? "att"
                                                          : "tag");
  return out;
}

}  // namespace

TEST_CASE("publish: by digest, then signature, then SBOM, the tag last; the SBOM from the gate's scan") {
  image::MemoryRepository repo("127.0.0.1:5000/ai/paddle");
  sign::Pkey key = sign::generate_key();
  MemorySource src = cpu_image();
  // The gate's scan of the image, with its inventory: what the nightly hands to publish.
  verify::GateResult gate = verify::release_gate(
      {.ref = "memory:x", .source = &src, .tag = "3.2.0-cpu", .kb = &test_kb(), .inventory = true});
  REQUIRE(gate.passed());
  REQUIRE(gate.inventory);
  CountingLayers counting(src);  // the layer reads publish makes of the local image
  PublishResult r = publish(repo, *key,
                            {.image = &counting,
                             .image_id = src.manifest().config().digest,
                             .tag = "3.2.0-cpu",
                             .inventory = &*gate.inventory});
  CHECK(writes(repo) == std::vector<std::string>{"digest", "sig", "att", "tag"});
  CHECK(counting.layer_opens == 1);  // the push; the SBOM read no layer
  CHECK(*repo.tag("3.2.0-cpu") == r.digest);
  CHECK(sign::check_signature(repo, r.digest, *key, repo.name() + ":3.2.0-cpu").ok);
  CHECK(r.packages.at("pypi/paddlepaddle") == "3.2.0");
  // verify's SBOM rows pass on what was published.
  auto rows = verify::sbom_rows(repo, src, repo.store().manifest(r.digest).value(), *key, "k");
  for (const auto& row : rows) CHECK_MESSAGE(row.status == verify::Status::kPass, row.id << ": " << row.found);

  SUBCASE("an image whose config is not the one that passed is not signed, and no tag moves") {
    MemorySource other = cpu_image("3.1.0");
    CHECK_THROWS_WITH_AS(publish(repo, *key, {.image = &other, .image_id = src.manifest().config().digest, .tag = "x"}),
                         doctest::Contains("refusing to sign"), CheckFailed);
    CHECK(!repo.tag("x"));
  }
  SUBCASE("a failing push moves no tag") {
    struct Dying : MemorySource {
      using MemorySource::MemorySource;
      std::unique_ptr<image::BlobReader> open_blob(const image::Descriptor&) override {
        throw Error("connection reset");
      }
    } dying(config_with({{"a", "b"}}), {make_tar({{"etc/x", "1"}})});
    CHECK_THROWS_AS(publish(repo, *key, {.image = &dying, .tag = "3.3.0"}), Error);
    CHECK(!repo.tag("3.3.0"));
  }
  SUBCASE("bad tags are refused before anything is written") {
    auto before = repo.store().log().size();
    for (const char* t : {"", "a/b", "sha256:0123"})
      CHECK_THROWS_AS(publish(repo, *key, {.image = &src, .tag = t}), InputError);
    CHECK(repo.store().log().size() == before);
  }
}

TEST_CASE("promote within a repository: only a signed, attested digest whose contents match the new tag") {
  image::MemoryRepository repo("127.0.0.1:5000/ai/paddle");
  sign::Pkey key = sign::generate_key();
  MemorySource src = cpu_image();
  image::Manifest m = stored(repo, src);
  PromoteRequest req{.digest = m.digest(), .tag = "3.2.0-cpu", .public_key = key.get(), .kb = &test_kb()};
  CHECK_THROWS_WITH_AS(promote(repo, nullptr, req), doctest::Contains("expected a valid signature"), CheckFailed);
  sign::sign_digest(repo, *key, {m.digest(), repo.name() + ":nightly", {}});
  CHECK_THROWS_WITH_AS(promote(repo, nullptr, req), doctest::Contains("expected an attestation"), CheckFailed);
  sign::Pkey other = sign::generate_key();
  sbom::attest_sbom(repo, src, m, *other);  // attested, but not by the key the digest must verify with
  CHECK_THROWS_WITH_AS(promote(repo, nullptr, req), doctest::Contains("does not verify"), CheckFailed);
  sbom::attest_sbom(repo, src, m, *key);
  PromoteRequest wrong_tag = req;
  wrong_tag.tag = "3.1.0-cpu";  // the claims are read against the NEW tag
  CHECK_THROWS_WITH_AS(promote(repo, nullptr, wrong_tag), doctest::Contains("claims to match its contents"),
                       CheckFailed);
  CHECK(!repo.tag("3.1.0-cpu"));
  // Signed for :nightly only: the moved tag would fail `imgtool verify REPO:3.2.0-cpu` under the same
  // (exact) policy, so it does not move; widened to any tag of the repository, it does.
  CHECK_THROWS_WITH_AS(
      promote(repo, nullptr, req),
      doctest::Contains("expected a signature by the given key for 127.0.0.1:5000/ai/paddle:3.2.0-cpu"), CheckFailed);
  CHECK(!repo.tag("3.2.0-cpu"));
  PromoteRequest any_tag = req;
  any_tag.policy.identity_rule = sign::IdentityRule::any_tag_of_repository;
  PromoteResult r = promote(repo, nullptr, any_tag);
  CHECK(*repo.tag("3.2.0-cpu") == m.digest());
  CHECK(r.previous_digest.empty());
  CHECK_FALSE(r.resigned);
  sign::sign_digest(repo, *key, {m.digest(), repo.name() + ":3.2.0-cpu", {}});  // signed for the tag itself
  CHECK(promote(repo, nullptr, req).previous_digest == m.digest());             // the exact policy holds now
}

TEST_CASE("promote uses one manifest: bytes served for the digest must hash to it, or no tag moves") {
  image::MemoryRepository repo("127.0.0.1:5000/ai/paddle");
  sign::Pkey key = sign::generate_key();
  MemorySource a = cpu_image(), b = cpu_image("3.1.0");
  image::Manifest ma = stored(repo, a, key.get(), true), mb = stored(repo, b);
  repo.store().serve_instead(ma.digest(), mb);
  CHECK_THROWS_WITH_AS(
      promote(repo, nullptr,
              {.digest = ma.digest(), .tag = "t", .public_key = key.get(), .policy = {.contents = false}}),
      doctest::Contains("expected the manifest bytes to hash to that digest"), CheckFailed);
  CHECK(!repo.tag("t"));
}

TEST_CASE(
    "promote --sign-key in one repository re-signs AND re-attests: verify --key <release key> passes the SBOM rows") {
  image::MemoryRepository repo("127.0.0.1:5000/ai/paddle");
  sign::Pkey nightly = sign::generate_key(), release_key = sign::generate_key();
  MemorySource src = cpu_image();
  image::Manifest m = stored(repo, src, nightly.get(), true);
  auto sbom_rows_with = [&](EVP_PKEY& k) {
    std::map<std::string, verify::Status> out;
    for (const auto& r : verify::sbom_rows(repo, src, m, k, "k")) out[r.id] = r.status;
    return out;
  };
  CHECK(sbom_rows_with(*release_key)["sbom.attestation"] == verify::Status::kFail);  // before: the nightly key's only
  PromoteResult r = promote(repo, nullptr,
                            {.digest = m.digest(),
                             .tag = "3.2.0-cpu",
                             .public_key = nightly.get(),
                             .sign_key = release_key.get(),
                             .kb = &test_kb()});
  CHECK(r.resigned);
  CHECK(sign::check_signature(repo, m.digest(), *release_key, repo.name() + ":3.2.0-cpu").ok);
  for (const auto& row : sbom_rows_with(*release_key)) CHECK_MESSAGE(row.second == verify::Status::kPass, row.first);
}

TEST_CASE("promote across: staging -> release by digest, attested and signed there, the tag last") {
  image::MemoryRepository staging("127.0.0.1:5000/staging/paddle");
  image::MemoryRepository release("127.0.0.1:5000/release/paddle");
  sign::Pkey nightly = sign::generate_key(), release_key = sign::generate_key();
  MemorySource src = cpu_image();
  image::Manifest a = stored(staging, src);
  PromoteRequest req{.digest = a.digest(),
                     .tag = "3.2.0-cpu",
                     .public_key = nightly.get(),
                     .sign_key = release_key.get(),
                     .kb = &test_kb()};
  auto written = [&] { return writes(release); };

  CHECK_THROWS_WITH_AS(promote(staging, &release, req), doctest::Contains("expected a valid signature"), CheckFailed);
  sign::sign_digest(staging, *nightly, {a.digest(), staging.name() + ":nightly-20261124", {}});
  CHECK_THROWS_WITH_AS(promote(staging, &release, req), doctest::Contains("expected an attestation"), CheckFailed);
  sbom::attest_sbom(staging, src, a, *nightly);
  PromoteRequest gated = req;
  gated.tag = "3.1.0-cpu";
  CHECK_THROWS_WITH_AS(promote(staging, &release, gated), doctest::Contains("claims to match"), CheckFailed);
  CHECK(written().empty());  // nothing copied while a check failed
  PromoteRequest unsigned_req = req;
  unsigned_req.sign_key = nullptr;
  CHECK_THROWS_AS(promote(staging, &release, unsigned_req), InputError);

  PromoteResult r = promote(staging, &release, req);
  CHECK(written() == std::vector<std::string>{"digest", "att", "sig", "tag"});
  CHECK(r.copied.digest == a.digest());
  CHECK(*release.tag("3.2.0-cpu") == a.digest());
  CHECK(sign::check_signature(release, a.digest(), *release_key, release.name() + ":3.2.0-cpu").ok);
  CHECK_FALSE(sign::check_signature(release, a.digest(), *nightly, release.name()).ok);  // the release key only
  sign::AttestationCheck att = sign::check_attestation(release, a.digest(), *release_key, sign::kSpdxPredicateType);
  CHECK(att.ok);
  CHECK(att.statement.subjects.at(0).name == release.name());
  CHECK(!staging.tag("3.2.0-cpu"));  // staging untouched
}

TEST_CASE("promote across: a copy that stores other bytes moves no tag") {
  struct Lying : image::MemoryRepository {  // a registry that answers a digest with other bytes
    using image::MemoryRepository::MemoryRepository;
    std::string asked;
    image::Manifest served;
    std::optional<image::Manifest> manifest(const std::string& r) override {
      return r == asked ? served : image::MemoryRepository::manifest(r);
    }
  };
  image::MemoryRepository staging("reg/staging/p");
  Lying release("reg/release/p");
  sign::Pkey key = sign::generate_key();
  MemorySource a = cpu_image(), b = cpu_image("3.1.0");
  image::Manifest ma = stored(staging, a, key.get(), true), mb = stored(release, b);
  release.asked = ma.digest();
  release.served = mb;
  CHECK_THROWS_WITH_AS(promote(staging, &release,
                               {.digest = ma.digest(),
                                .tag = "1",
                                .public_key = key.get(),
                                .sign_key = key.get(),
                                .policy = {.contents = false}}),
                       doctest::Contains("expected the manifest bytes to hash to that digest"), CheckFailed);
  CHECK(!release.tag("1"));
}

namespace {

// A gpu-labelled image (the evidence rules key on io.imgtool.variant), stored, signed and SBOM-attested.
image::Manifest gpu_image_in(image::MemoryRepository& repo, EVP_PKEY& key, const std::string& seed = "a",
                             const std::string& archs = "") {
  std::map<std::string, std::string> labels = {
      {"io.imgtool.variant", "gpu"}, {"io.imgtool.paddle", "2.6.2"}, {"seed", seed}};
  if (!archs.empty()) labels["io.imgtool.cuda-archs"] = archs;
  MemorySource src(config_with(labels), {make_tar({{"etc/seed", seed}}, "gzip")});
  return stored(repo, src, &key, true);
}

nlohmann::json h100_probe() {
  return nlohmann::json::parse(read_file(imgtool::testing::source_dir() + "/smoke/probe/testdata/h100-probe.json"));
}

smoke::SmokeEvidence bound(smoke::SmokeEvidence e, const std::string& verdict, const std::string& attested) {
  e.bound = true;
  e.verdict = verdict;
  e.attested = attested;
  e.source = "";
  return e;
}

void attest_evidence(image::MemoryRepository& repo, EVP_PKEY& key, const std::string& digest,
                     const smoke::SmokeEvidence& e) {
  sign::attach_attestation(repo, key, {digest, repo.name(), smoke::kSmokePredicateType, smoke::to_predicate(e)});
}

// verify's smoke.evidence row for `digest` judged as a `variant` image; `required` = the policy's
// hardware_evidence, `note` = the signature's override annotation.
verify::CheckResult evidence_row(image::Repository& repo, const std::string& digest, EVP_PKEY& key,
                                 const std::string& variant, bool required, const std::string& note = "") {
  return verify::evidence_row(verify::judge_hardware(repo, digest, key, variant, ""), required, note);
}

}  // namespace

TEST_CASE("a gpu image is promoted only with hardware evidence; the override is recorded on the signature") {
  image::MemoryRepository repo("127.0.0.1:5000/ai/paddle");
  sign::Pkey key = sign::generate_key(), release_key = sign::generate_key(), other = sign::generate_key();
  image::Manifest m = gpu_image_in(repo, *key);
  // The identity rule is widened: this case is about the evidence (the digest is signed for :nightly).
  PromoteRequest req{.digest = m.digest(),
                     .tag = "2.6.2-gpu",
                     .public_key = key.get(),
                     .policy = {.identity_rule = sign::IdentityRule::any_tag_of_repository, .contents = false}};
  // The H100 document recorded by bench/gpu-probe.sh on a lent GPU, REPLAYED here (source says so).
  smoke::SmokeEvidence replayed =
      smoke::evidence_from_probe(h100_probe(), "replayed: smoke/probe/testdata/h100-probe.json");
  replayed.verdict = "pass";
  // What a bound run on that H100 attests (the kind and verdict are imgtool's: smoke/evidence_test.cc).
  smoke::SmokeEvidence hardware = bound(replayed, "pass", "2026-11-27T10:00:00Z");
  smoke::SmokeEvidence fake = hardware;
  fake.host = smoke::HostKind::test_double;
  fake.devices[0].name = smoke::kTestDoubleDevice;
  fake.source = "";

  CHECK_THROWS_WITH_AS(promote(repo, nullptr, req), doctest::Contains("found no smoke attestation"), CheckFailed);
  attest_evidence(repo, *key, m.digest(), fake);
  CHECK_THROWS_WITH_AS(promote(repo, nullptr, req), doctest::Contains("found test-double"), CheckFailed);
  CHECK(!repo.tag("2.6.2-gpu"));

  SUBCASE("forged: a hardware statement signed by another key") {
    attest_evidence(repo, *other, m.digest(), hardware);
    CHECK_THROWS_WITH_AS(promote(repo, nullptr, req), doctest::Contains("found test-double"), CheckFailed);
    image::MemoryRepository lone("127.0.0.1:5000/ai/other");  // the forged statement alone
    image::Manifest n = gpu_image_in(lone, *key);
    attest_evidence(lone, *other, n.digest(), hardware);
    verify::EvidenceCheck e = verify::check_evidence(lone, n.digest(), *key);
    CHECK(e.found);
    CHECK_FALSE(e.ok);
    CHECK(evidence_row(lone, n.digest(), *key, "gpu", false).status == verify::Status::kFail);
    CHECK_THROWS_WITH_AS(
        promote(lone, nullptr,
                {.digest = n.digest(), .tag = "t", .public_key = key.get(), .policy = {.contents = false}}),
        doctest::Contains("does not hold"), CheckFailed);
    CHECK(!repo.tag("2.6.2-gpu"));
  }
  SUBCASE("wrong subject: another digest's hardware statement copied to this one") {
    image::Manifest b = gpu_image_in(repo, *key, "b");
    attest_evidence(repo, *key, b.digest(), hardware);
    auto layers = repo.manifest(sign::attestation_tag(m.digest()))->layers();  // m's own (its SBOM) kept
    for (const auto& l : repo.manifest(sign::attestation_tag(b.digest()))->layers()) layers.push_back(l);
    sign::SignatureManifest sm = sign::build_signature_manifest(layers);
    repo.put_blob(sm.config_descriptor, sm.config);
    repo.put_manifest(sm.manifest, sign::attestation_tag(m.digest()));
    // the other image's statement is passed over (newest first); m's own test-double one is what counts
    CHECK_THROWS_WITH_AS(promote(repo, nullptr, req), doctest::Contains("found test-double"), CheckFailed);
    CHECK(!repo.tag("2.6.2-gpu"));
  }
  SUBCASE("hardware evidence by the key lets it through, and is attested again with --sign-key") {
    attest_evidence(repo, *key, m.digest(), hardware);
    PromoteRequest signed_req = req;
    signed_req.sign_key = release_key.get();
    PromoteResult r = promote(repo, nullptr, signed_req);
    CHECK(*repo.tag("2.6.2-gpu") == m.digest());
    CHECK(r.evidence.find("hardware, 1× NVIDIA H100 80GB HBM3") == 0);
    verify::EvidenceCheck again = verify::check_evidence(repo, m.digest(), *release_key);
    REQUIRE(again.ok);
    CHECK(again.evidence->hardware_pass());
    CHECK(evidence_row(repo, m.digest(), *release_key, "gpu", true).status == verify::Status::kPass);
  }
  SUBCASE("a replayed document (unbound) is never hardware evidence, whatever it says") {
    smoke::SmokeEvidence newest = replayed;
    newest.attested = "2026-11-28T00:00:00Z";  // signed after the test-double run: the one that counts
    attest_evidence(repo, *key, m.digest(), newest);
    CHECK_THROWS_WITH_AS(promote(repo, nullptr, req), doctest::Contains("(unbound: a bare document"), CheckFailed);
    CHECK(!repo.tag("2.6.2-gpu"));
  }
  SUBCASE("an older passing attestation put in front of a newer failing one: the newer, by its signed time, counts") {
    attest_evidence(repo, *key, m.digest(), bound(replayed, "fail", "2026-11-27T10:00:00Z"));
    attest_evidence(repo, *key, m.digest(), bound(replayed, "pass", "2026-11-20T10:00:00Z"));  // last in the manifest
    verify::EvidenceCheck e = verify::check_evidence(repo, m.digest(), *key);
    REQUIRE(e.ok);
    CHECK(e.considered == 3);
    CHECK(e.evidence->attested == "2026-11-27T10:00:00Z");
    CHECK_THROWS_WITH_AS(promote(repo, nullptr, req), doctest::Contains("(verdict fail)"), CheckFailed);
    CHECK(!repo.tag("2.6.2-gpu"));
  }
  SUBCASE("evidence from a GPU the image was not compiled for, and --require-gpu per family") {
    image::Manifest old = gpu_image_in(repo, *key, "sm86", "sm_61,sm_70,sm_75,sm_80,sm_86");
    attest_evidence(repo, *key, old.digest(), hardware);
    PromoteRequest r2{.digest = old.digest(), .tag = "t", .public_key = key.get(), .policy = {.contents = false}};
    CHECK_THROWS_WITH_AS(promote(repo, nullptr, r2),
                         doctest::Contains("but the image was not compiled for NVIDIA H100 80GB HBM3"), CheckFailed);
    attest_evidence(repo, *key, m.digest(), hardware);
    PromoteRequest a100 = req;
    a100.policy.require_gpu = {"sm_80"};
    CHECK_THROWS_WITH_AS(promote(repo, nullptr, a100),
                         doctest::Contains("no smoke attestation from an sm_80 device (--require-gpu sm_80)"),
                         CheckFailed);
    a100.policy.require_gpu = {"sm_90"};
    promote(repo, nullptr, a100);
    CHECK(*repo.tag("2.6.2-gpu") == m.digest());
  }
  SUBCASE("--allow-without-gpu-smoke: needs --sign-key; the signature carries the override; verify shows it") {
    PromoteRequest allow = req;
    allow.policy.hardware_evidence = false;
    CHECK_THROWS_WITH_AS(promote(repo, nullptr, allow), doctest::Contains("expected --sign-key"), InputError);
    allow.sign_key = release_key.get();
    PromoteResult r = promote(repo, nullptr, allow);
    CHECK(*repo.tag("2.6.2-gpu") == m.digest());
    CHECK(r.evidence.find("--allow-without-gpu-smoke") != std::string::npos);
    sign::SignatureCheck sig = sign::check_signature(repo, m.digest(), *release_key, repo.name() + ":2.6.2-gpu");
    REQUIRE(sig.ok);
    std::string note = sig.accepted_annotations.at(verify::kGpuSmokeOverride);
    CHECK(note.find("--allow-without-gpu-smoke") != std::string::npos);
    // The override is the promoter's policy, shown; the verifier's own decides: under the default
    // (hardware evidence required) it fails, under --allow-without-gpu-smoke it warns.
    verify::CheckResult row = evidence_row(repo, m.digest(), *release_key, "gpu", false, note);
    CHECK(row.status == verify::Status::kWarn);
    CHECK(row.found.find("test-double") != std::string::npos);
    CHECK(row.found.find("--allow-without-gpu-smoke") != std::string::npos);
    CHECK(evidence_row(repo, m.digest(), *release_key, "gpu", true, note).status == verify::Status::kFail);
  }
}

TEST_CASE("publish attests the smoke's evidence before the tag moves") {
  image::MemoryRepository repo("127.0.0.1:5000/ai/paddle");
  sign::Pkey key = sign::generate_key();
  MemorySource src = cpu_image();
  smoke::SmokeEvidence none =
      smoke::evidence_from_result({{"docker", {{"argv", {"docker", "run", "--shm-size", "8g", "img"}}}},
                                   {"verdict", {{"status", "pass"}}},
                                   {"probe", nullptr}},
                                  "base");
  PublishResult r = publish(repo, *key, {.image = &src, .tag = "3.2.0-cpu", .evidence = &none});
  CHECK(writes(repo) == std::vector<std::string>{"digest", "sig", "att", "att", "tag"});
  verify::EvidenceCheck e = verify::check_evidence(repo, r.digest, *key);
  REQUIRE(e.ok);
  CHECK(e.evidence->host == smoke::HostKind::none);
  CHECK(e.evidence->shm_size == "8g");
  CHECK(e.evidence->profile == "base");
  CHECK(evidence_row(repo, r.digest, *key, "cpu", true).status == verify::Status::kPass);  // a cpu image needs no GPU
  CHECK(evidence_row(repo, r.digest, *key, "gpu", false).status == verify::Status::kWarn);
  CHECK(evidence_row(repo, r.digest, *key, "gpu", true).status == verify::Status::kFail);  // the default policy
}
