// Unit tests of sign/: keys, payloads, signatures (cross-checked with the
// openssl CLI), signature manifests, and promotion order on a memory repository.
#include <doctest/doctest.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/process.h"
#include "core/strings.h"
#include "sign/attestation.h"
#include "sign/check_signature.h"
#include "sign/ecdsa.h"
#include "sign/keys.h"
#include "sign/payload.h"
#include "sign/promote.h"
#include "sign/sig_manifest.h"
#include "sign/sign_image.h"
#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::sign;
using imgtool::testing::ScratchDir;

namespace {

unsigned mode_of(const fs::path& p) {
  struct stat st{};
  ::stat(p.c_str(), &st);
  return st.st_mode & 07777;
}

image::Manifest fake_image(MemoryRepository& repo, const std::string& seed) {
  std::string layer = "layer-" + seed, config = "{\"seed\":\"" + seed + "\"}";
  image::Descriptor l{image::media::kOciLayerGzip, sha256_digest(layer), (int64_t)layer.size(), {}};
  image::Descriptor c{image::media::kOciConfig, sha256_digest(config), (int64_t)config.size(), {}};
  repo.put_blob(l, layer);
  repo.put_blob(c, config);
  nlohmann::json m = {{"schemaVersion", 2}, {"mediaType", image::media::kOciManifest},
                      {"config", c}, {"layers", {l}}};
  return {m.dump(), image::media::kOciManifest};
}

std::string identity(MemoryRepository& r, const std::string& tag) { return r.name() + ":" + tag; }

}  // namespace

TEST_CASE("keygen writes a 0600 PKCS#8 key and a PUBLIC KEY; a 0644 key is refused") {
  ScratchDir d("keys");
  ::umask(022);
  KeyFiles f = write_key_pair(*generate_key(), d.path / "keys/release", "");
  CHECK(mode_of(f.private_key) == 0600);
  CHECK(read_file(f.private_key).rfind("-----BEGIN PRIVATE KEY-----", 0) == 0);
  CHECK(read_file(f.public_key).rfind("-----BEGIN PUBLIC KEY-----", 0) == 0);
  CHECK(load_private_key(f.private_key, ""));
  CHECK(load_public_key(f.public_key));
  CHECK_THROWS_AS(write_key_pair(*generate_key(), d.path / "keys/release", ""), InputError);

  ::chmod(f.private_key.c_str(), 0644);
  try {
    load_private_key(f.private_key, "");
    FAIL("a 0644 key was accepted");
  } catch (const InputError& e) {
    std::string m = e.what();
    CHECK(m.find("too open") != std::string::npos);
    CHECK(m.find("chmod 600") != std::string::npos);
    CHECK(m.find("PRIVATE") == std::string::npos);  // no key material in the message
  }
}

TEST_CASE("an encrypted key needs its passphrase") {
  ScratchDir d("enckey");
  KeyFiles f = write_key_pair(*generate_key(), d.path / "k", "s3cret-pass");
  std::string pem = read_file(f.private_key);
  CHECK(pem.find("ENCRYPTED PRIVATE KEY") != std::string::npos);
  CHECK(pem.find("s3cret-pass") == std::string::npos);
  CHECK(load_private_key(f.private_key, "s3cret-pass"));
  CHECK_THROWS_AS(load_private_key(f.private_key, ""), InputError);
  try {
    load_private_key(f.private_key, "bogus-XYZ");
    FAIL("wrong passphrase accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("bogus-XYZ") == std::string::npos);  // never echoes it back
    CHECK(std::string(e.what()).find("passphrase") != std::string::npos);
  }
}

TEST_CASE("encrypted keys use scrypt; keys encrypted with PBKDF2 (older imgtool, openssl) still load") {
  ScratchDir d("scryptkey");
  KeyFiles f = write_key_pair(*generate_key(), d.path / "k", "s3cret-pass");
  auto asn1 = run({"openssl", "asn1parse", "-in", f.private_key.string()});
  REQUIRE(asn1.ok());
  CHECK(asn1.out.find(":scrypt") != std::string::npos);  // not PBKDF2 at 2048 iterations
  CHECK(asn1.out.find("PBKDF2") == std::string::npos);
  CHECK(load_private_key(f.private_key, "s3cret-pass"));

  fs::path plain = d.path / "plain.key", old = d.path / "old.key";
  write_key_pair(*generate_key(), d.path / "plain", "");
  auto conv = run({"openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-iter", "2048", "-in", plain.string(), "-out",
                   old.string(), "-passout", "pass:old-pass"});
  REQUIRE(conv.ok());
  fs::permissions(old, fs::perms::owner_read | fs::perms::owner_write);
  CHECK(load_private_key(old, "old-pass"));
}

namespace {

// The DER inside a PEM, and back (64-character lines).
std::string pem_der(const std::string& pem) {
  std::string b64;
  for (auto& line : imgtool::strings::split_lines(pem))
    if (line.rfind("-----", 0) != 0) b64 += line;
  return base64_decode(b64).value_or("");
}
std::string der_pem(const std::string& der, const std::string& label) {
  std::string b64 = base64_encode(der), out = "-----BEGIN " + label + "-----\n";
  for (size_t i = 0; i < b64.size(); i += 64) out += b64.substr(i, 64) + "\n";
  return out + "-----END " + label + "-----\n";
}

}  // namespace

// cosign's scrypt cost (N=2^15, r=8) needs just over OpenSSL's fixed 32 MiB scrypt limit, so
// OpenSSL's PEM calls could neither write nor read such a key: imgtool wrote N=2^14.
TEST_CASE("encrypted keys: scrypt at N=2^15 (cosign's) written and read; N=2^14 and PBKDF2 keys still load") {
  ScratchDir d("scrypt15");
  auto key = generate_key();
  KeyFiles f = write_key_pair(*key, d.path / "k", "s3cret-pass");
  auto asn1 = run({"openssl", "asn1parse", "-in", f.private_key.string()});
  REQUIRE(asn1.ok());
  INFO(asn1.out);
  CHECK(asn1.out.find(":scrypt") != std::string::npos);
  CHECK(asn1.out.find("INTEGER           :8000") != std::string::npos);  // N = 32768; before: :4000 (16384)
  CHECK(asn1.out.find(":aes-256-cbc") != std::string::npos);
  auto loaded = load_private_key(f.private_key, "s3cret-pass");
  REQUIRE(loaded);
  CHECK(EVP_PKEY_eq(loaded.get(), key.get()) == 1);
  CHECK_THROWS_AS(load_private_key(f.private_key, "wrong-pass"), InputError);
  CHECK_THROWS_AS(load_private_key(f.private_key, ""), InputError);

  // Older keys: scrypt at N=2^14 (imgtool before, `openssl pkcs8 -scrypt`) and PBKDF2.
  write_key_pair(*key, d.path / "plain", "");
  for (std::vector<std::string> how : {std::vector<std::string>{"-scrypt"}, {"-v2prf", "hmacWithSHA256", "-iter", "2048"}}) {
    fs::path old = d.path / ("old" + how[0] + ".key");
    std::vector<std::string> argv{"openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", (d.path / "plain.key").string(),
                                  "-out", old.string(), "-passout", "pass:old-pass"};
    argv.insert(argv.end(), how.begin(), how.end());
    auto conv = run(argv);
    REQUIRE_MESSAGE(conv.ok(), conv.err);
    fs::permissions(old, fs::perms::owner_read | fs::perms::owner_write);
    auto old_key = load_private_key(old, "old-pass");
    CHECK_MESSAGE(EVP_PKEY_eq(old_key.get(), key.get()) == 1, how[0]);
    CHECK_THROWS_AS(load_private_key(old, "wrong-pass"), InputError);
  }
}

TEST_CASE("encrypted keys: scrypt parameters asking for gigabytes are refused before any memory is spent") {
  ScratchDir d("scrypt-hostile");
  std::string der = pem_der(private_key_pem(*generate_key(), "p"));
  const std::string n15("\x02\x03\x00\x80\x00", 5), n22("\x02\x03\x40\x00\x00", 5);  // INTEGER 2^15 -> 2^22 (4 GiB at r=8)
  REQUIRE(der.find(n15) != std::string::npos);
  der.replace(der.find(n15), n15.size(), n22);
  auto t0 = std::chrono::steady_clock::now();
  try {
    load_private_key_pem(der_pem(der, "ENCRYPTED PRIVATE KEY"), "p", "hostile.key");
    FAIL("a key asking for N=2^22 was derived");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("hostile.key: expected scrypt parameters within 128 MiB") != std::string::npos);
    CHECK(std::string(e.what()).find("found N=4194304, r=8, p=1") != std::string::npos);
  }
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
}

TEST_CASE("a cosign-encrypted key gets a clear refusal") {
  std::string pem = "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\neyJrZGYiOnt9fQ==\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n";
  CHECK_THROWS_WITH_AS(load_private_key_pem(pem, "", "k"), doctest::Contains("cosign import-key-pair"), InputError);
}

TEST_CASE("payload bytes are exactly cosign's and the parser is strict") {
  Payload p{"reg:5000/ai/paddle:3.1.0", "sha256:" + std::string(64, 'a'), {}};
  CHECK(p.serialize() ==
        "{\"critical\":{\"identity\":{\"docker-reference\":\"reg:5000/ai/paddle:3.1.0\"},"
        "\"image\":{\"docker-manifest-digest\":\"sha256:" + std::string(64, 'a') + "\"},"
        "\"type\":\"cosign container image signature\"},\"optional\":null}");
  Payload back = parse_payload(p.serialize());
  CHECK(back.docker_reference == p.docker_reference);
  CHECK(back.manifest_digest == p.manifest_digest);
  auto bad = [&](std::string from, std::string to) {
    std::string s = p.serialize();
    s.replace(s.find(from), from.size(), to);
    CHECK_THROWS_AS(parse_payload(s), CheckFailed);
  };
  bad("cosign container image signature", "Cosign container image signature");
  bad("\"optional\":null", "\"optional\":null,\"extra\":1");
  bad("\"type\"", "\"Type\"");
  // A duplicate key: parsers disagree on which value wins (first or last), so a
  // payload with one is refused whatever the values.
  bad("\"docker-manifest-digest\":", "\"docker-manifest-digest\":\"sha256:" + std::string(64, 'b') + "\",\"docker-manifest-digest\":");
  bad("\"optional\":null", "\"optional\":null,\"optional\":null");
  bad("\"optional\":null", "\"optional\":{\"a\":1}");
  Payload withopt = p;
  withopt.optional["creator"] = "imgtool";
  CHECK(parse_payload(withopt.serialize()).optional.at("creator") == "imgtool");
}

TEST_CASE("signatures round-trip and the openssl CLI agrees") {
  ScratchDir d("ossl");
  Pkey key = generate_key();
  KeyFiles f = write_key_pair(*key, d.path / "k", "");
  Pkey pub = load_public_key(f.public_key);
  std::string payload = Payload{"r/x:1", sha256_digest("img"), {}}.serialize();
  std::string der = sign_der(*key, payload);
  CHECK(verify_der(*pub, payload, der));
  CHECK_FALSE(verify_der(*pub, payload + " ", der));
  CHECK_FALSE(verify_der(*pub, payload, der.substr(0, der.size() - 3)));  // truncated
  CHECK_FALSE(verify_der(*load_public_key_pem(public_key_pem(*generate_key()), "other"), payload, der));
  CHECK(*base64_decode(base64_encode(der)) == der);
  CHECK_FALSE(base64_decode(base64_encode(der).substr(0, 20) + "=").has_value());

  write_file_atomic(d.path / "payload", payload);
  write_file_atomic(d.path / "sig.der", der);
  auto r = run({"openssl", "dgst", "-sha256", "-verify", f.public_key.string(), "-signature",
                (d.path / "sig.der").string(), (d.path / "payload").string()});
  CHECK_MESSAGE(r.ok(), (r.out + r.err));
  CHECK(r.out.find("Verified OK") != std::string::npos);
  // And the other way round: openssl signs, imgtool verifies.
  auto s = run({"openssl", "dgst", "-sha256", "-sign", f.private_key.string(), "-out",
                (d.path / "sig2.der").string(), (d.path / "payload").string()});
  REQUIRE(s.ok());
  CHECK(verify_der(*pub, payload, read_file(d.path / "sig2.der")));
}

TEST_CASE("signing appends to the .sig manifest and check_signature rejects faults") {
  MemoryRepository repo("127.0.0.1:5000/ai/paddle");
  Pkey key = generate_key(), other = generate_key();
  image::Manifest a = fake_image(repo, "a"), b = fake_image(repo, "b");
  repo.put_manifest(a, "");
  repo.put_manifest(b, "");
  SignResult s1 = sign_digest(repo, *key, {a.digest(), identity(repo, "t"), {}});
  CHECK(s1.signature_tag == "sha256-" + a.digest().substr(7) + ".sig");
  CHECK(s1.layers == 1);
  CHECK(sign_digest(repo, *key, {a.digest(), identity(repo, "t"), {}}).already_signed);
  CHECK(sign_digest(repo, *other, {a.digest(), identity(repo, "t"), {}}).layers == 2);  // appended
  auto sig = repo.manifest(s1.signature_tag);
  REQUIRE(sig);
  CHECK(sig->json()["mediaType"] == image::media::kOciManifest);
  CHECK(sig->json()["layers"][0]["mediaType"] == kSimpleSigningMediaType);

  CHECK(check_signature(repo, a.digest(), *key, identity(repo, "t")).ok);
  CHECK(check_signature(repo, a.digest(), *key, repo.name()).ok);  // by repository
  CHECK_FALSE(check_signature(repo, a.digest(), *key, identity(repo, "other")).ok);

  SUBCASE("unsigned digest") {
    auto c = check_signature(repo, b.digest(), *key, "");
    CHECK_FALSE(c.ok);
    CHECK(c.summary().find("no sha256-") != std::string::npos);
  }
  SUBCASE("wrong key") {
    auto c = check_signature(repo, a.digest(), *generate_key(), "");
    CHECK_FALSE(c.ok);
    CHECK(c.summary().find("does not verify with the given key") != std::string::npos);
  }
  SUBCASE("signature for another digest") {
    repo.tags[signature_tag(b.digest())] = repo.tags[s1.signature_tag];
    auto c = check_signature(repo, b.digest(), *key, "");
    CHECK_FALSE(c.ok);
    CHECK(c.summary().find("is for digest " + a.digest()) != std::string::npos);
  }
  SUBCASE("truncated signature") {
    auto layers = sig->layers();
    for (auto& l : layers) {
      std::string& s = l.annotations[kSignatureAnnotation];
      s = s.substr(0, s.size() - 8);
    }
    repo.put_manifest(build_signature_manifest(layers).manifest, s1.signature_tag);
    auto c = check_signature(repo, a.digest(), *key, "");
    CHECK_FALSE(c.ok);
    CHECK(c.summary().find("truncated") != std::string::npos);
  }
}

TEST_CASE("promote moves a tag only onto a signed digest") {
  MemoryRepository repo("127.0.0.1:5000/ai/paddle");
  Pkey key = generate_key();
  image::Manifest a = fake_image(repo, "a");
  repo.put_manifest(a, "");
  CHECK_THROWS_AS(promote(repo, *key, {a.digest(), "3.1.0", "", nullptr, nullptr}), CheckFailed);
  CHECK(repo.tags.count("3.1.0") == 0);
  sign_digest(repo, *key, {a.digest(), identity(repo, "nightly"), {}});
  PromoteGate refuse = [](const image::Manifest&) { throw CheckFailed("claims differ"); };
  CHECK_THROWS_AS(promote(repo, *key, {a.digest(), "3.1.0", "", refuse, nullptr}), CheckFailed);
  CHECK(repo.tags.count("3.1.0") == 0);
  promote(repo, *key, {a.digest(), "3.1.0", "", nullptr, nullptr});
  CHECK(repo.tags.at("3.1.0") == a.digest());
}

TEST_CASE("promote uses one manifest: bytes served for the digest must hash to it, or no tag moves") {
  struct Lying : MemoryRepository {  // answers a GET by digest with another image's bytes
    using MemoryRepository::MemoryRepository;
    std::string asked, served;
    std::optional<image::Manifest> manifest(const std::string& r) override {
      return MemoryRepository::manifest(r == asked ? served : r);
    }
  } repo("127.0.0.1:5000/ai/paddle");
  Pkey key = generate_key();
  image::Manifest a = fake_image(repo, "a"), b = fake_image(repo, "b");
  repo.put_manifest(a, "");
  repo.put_manifest(b, "");
  sign_digest(repo, *key, {a.digest(), identity(repo, "nightly"), {}});
  repo.asked = a.digest();
  repo.served = b.digest();
  CHECK_THROWS_WITH_AS(promote(repo, *key, {a.digest(), "3.1.0", "", nullptr, nullptr}),
                       doctest::Contains("expected the manifest bytes to hash to that digest"), CheckFailed);
  CHECK(repo.tags.count("3.1.0") == 0);  // b (unsigned) was not put under the tag
}

TEST_CASE("publish_signed: content by digest, then signature, then the tag") {
  struct Spy : MemoryRepository {
    using MemoryRepository::MemoryRepository;
    std::vector<std::string> log;
    void put_manifest(const image::Manifest& m, const std::string& tag) override {
      log.push_back(tag.empty() ? "digest" : tag.find(".sig") != std::string::npos ? "sig" : "tag");
      MemoryRepository::put_manifest(m, tag);
    }
  } repo("127.0.0.1:5000/ai/paddle");
  Pkey key = generate_key();
  image::Manifest a;
  auto push = [&] {
    a = fake_image(repo, "a");
    repo.put_manifest(a, "");
    return a;
  };
  PublishResult r = publish_signed(repo, push, *key, {"3.1.0", "", {}, nullptr});
  CHECK(repo.log == std::vector<std::string>{"digest", "sig", "tag"});
  CHECK(repo.tags.at("3.1.0") == r.digest);
  CHECK(check_signature(repo, r.digest, *key, repo.name() + ":3.1.0").ok);

  // Killed (here: failing) during the push: the tag does not move.
  auto dies = [&]() -> image::Manifest { throw Error("connection reset"); };
  CHECK_THROWS_AS(publish_signed(repo, dies, *key, {"3.2.0", "", {}, nullptr}), Error);
  CHECK(repo.tags.count("3.2.0") == 0);
}

TEST_CASE("two signers on one digest keep both signatures (a lost .sig update is repaired)") {
  // Deterministic interleaving: the rival read the .sig manifest BEFORE our PUT
  // and writes it (with only its own layer added) right AFTER our PUT.
  struct LostUpdate : MemoryRepository {
    using MemoryRepository::MemoryRepository;
    EVP_PKEY* rival = nullptr;
    std::string digest;
    bool raced = false;
    void put_manifest(const image::Manifest& m, const std::string& tag) override {
      if (raced || tag.find(".sig") == std::string::npos) return MemoryRepository::put_manifest(m, tag);
      raced = true;
      MemoryRepository stale = *this;  // what the rival read
      sign_digest(stale, *rival, {digest, name() + ":rival", {}});
      MemoryRepository::put_manifest(m, tag);  // ours lands ...
      for (auto& [d, b] : stale.blobs) blobs[d] = b;
      MemoryRepository::put_manifest(*stale.manifest(tag), tag);  // ... and the rival's stale PUT replaces it
    }
  } repo("127.0.0.1:5000/ai/paddle");
  Pkey key = generate_key(), rival = generate_key();
  image::Manifest a = fake_image(repo, "a");
  repo.put_manifest(a, "");
  repo.rival = rival.get();
  repo.digest = a.digest();
  SignResult s = sign_digest(repo, *key, {a.digest(), identity(repo, "t"), {}});
  CHECK(repo.raced);
  CHECK(s.layers == 2);
  CHECK(check_signature(repo, a.digest(), *key, identity(repo, "t")).ok);
  CHECK(check_signature(repo, a.digest(), *rival, identity(repo, "rival")).ok);
}

TEST_CASE("six concurrent signers on one digest: every signature stays") {
  struct Locked : MemoryRepository {  // thread-safe, and slow enough for the signers to interleave
    using MemoryRepository::MemoryRepository;
    std::mutex mu;
    std::optional<image::Manifest> manifest(const std::string& r) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::lock_guard<std::mutex> l(mu);
      return MemoryRepository::manifest(r);
    }
    std::string blob(const image::Descriptor& d) override {
      std::lock_guard<std::mutex> l(mu);
      return MemoryRepository::blob(d);
    }
    bool has_blob(const image::Descriptor& d) override {
      std::lock_guard<std::mutex> l(mu);
      return MemoryRepository::has_blob(d);
    }
    void put_blob(const image::Descriptor& d, const std::string& b) override {
      std::lock_guard<std::mutex> l(mu);
      MemoryRepository::put_blob(d, b);
    }
    void put_manifest(const image::Manifest& m, const std::string& t) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::lock_guard<std::mutex> l(mu);
      MemoryRepository::put_manifest(m, t);
    }
  } repo("127.0.0.1:5000/ai/paddle");
  image::Manifest a = fake_image(repo, "a");
  repo.put_manifest(a, "");
  std::vector<Pkey> keys;
  for (int i = 0; i < 6; ++i) keys.push_back(generate_key());
  std::vector<std::thread> signers;
  for (int i = 0; i < 6; ++i)
    signers.emplace_back([&, i] { sign_digest(repo, *keys[i], {a.digest(), identity(repo, "s" + std::to_string(i)), {}}); });
  for (auto& t : signers) t.join();
  for (int i = 0; i < 6; ++i) CHECK_MESSAGE(check_signature(repo, a.digest(), *keys[i], repo.name()).ok, "signer " << i);
  CHECK(repo.manifest(signature_tag(a.digest()))->layers().size() == 6);
}

TEST_CASE("promote_across: staging → release by digest, attested and signed there, the tag last") {
  MemoryRepository staging("127.0.0.1:5000/staging/paddle"), release("127.0.0.1:5000/release/paddle");
  Pkey nightly = generate_key(), release_key = generate_key();
  image::Manifest a = fake_image(staging, "a");
  staging.put_manifest(a, "");
  int copies = 0;
  auto copy = [&] {  // what the copy engine does: blobs, then the manifest by digest
    ++copies;
    for (auto& d : {a.config(), a.layers()[0]}) release.put_blob(d, staging.blob(d));
    release.put_manifest(a, "");
  };
  CrossPromoteRequest req{.digest = a.digest(), .tag = "3.2.0", .require_attestation = kSpdxPredicateType,
                          .copy_by_digest = copy};

  // Unsigned in staging: nothing is copied, no tag.
  CHECK_THROWS_WITH_AS(promote_across(staging, release, *nightly, *release_key, req),
                       doctest::Contains("expected a valid signature"), CheckFailed);
  CHECK(copies == 0);
  sign_digest(staging, *nightly, {a.digest(), identity(staging, "nightly-20261124"), {}});
  // Signed but without its SBOM: still nothing.
  CHECK_THROWS_WITH_AS(promote_across(staging, release, *nightly, *release_key, req),
                       doctest::Contains("expected an attestation"), CheckFailed);
  CHECK(copies == 0);
  nlohmann::ordered_json sbom = {{"spdxVersion", "SPDX-2.3"}, {"name", "a"}};
  attach_attestation(staging, *nightly, {a.digest(), staging.name(), kSpdxPredicateType, sbom});
  // A gate that refuses: nothing.
  CrossPromoteRequest gated = req;
  gated.gate = [](const image::Manifest&) { throw CheckFailed("claims differ"); };
  CHECK_THROWS_AS(promote_across(staging, release, *nightly, *release_key, gated), CheckFailed);
  CHECK(copies == 0);

  PromoteResult r = promote_across(staging, release, *nightly, *release_key, req);
  CHECK(copies == 1);
  CHECK(r.previous_digest.empty());
  CHECK(release.tags.at("3.2.0") == a.digest());
  CHECK(check_signature(release, a.digest(), *release_key, identity(release, "3.2.0")).ok);
  CHECK_FALSE(check_signature(release, a.digest(), *nightly, release.name()).ok);  // signed by the release key only
  AttestationCheck att = check_attestation(release, a.digest(), *release_key, kSpdxPredicateType);
  CHECK(att.ok);
  CHECK(att.statement.subjects.at(0).name == release.name());
  CHECK(att.statement.predicate == sbom);
  CHECK(staging.tags.count("3.2.0") == 0);  // staging untouched
}

TEST_CASE("promote_across: a copy that stores other bytes moves no tag") {
  MemoryRepository staging("reg/staging/p"), release("reg/release/p");
  Pkey key = generate_key();
  image::Manifest a = fake_image(staging, "a"), b = fake_image(release, "b");
  staging.put_manifest(a, "");
  sign_digest(staging, *key, {a.digest(), identity(staging, "n"), {}});
  auto wrong = [&] { release.manifests[a.digest()] = b; };  // a registry that stores something else
  CHECK_THROWS_WITH_AS(promote_across(staging, release, *key, *key, {.digest = a.digest(), .tag = "1", .copy_by_digest = wrong}),
                       doctest::Contains("expected the manifest bytes to hash to that digest"), CheckFailed);
  CHECK(release.tags.count("1") == 0);
}

TEST_CASE("required_identity: exact for a tag, the repository for a digest or on request") {
  CHECK(required_identity("reg:5000/ai/paddle", "3.2.0", false) == "reg:5000/ai/paddle:3.2.0");
  CHECK(required_identity("reg:5000/ai/paddle", "", false) == "reg:5000/ai/paddle");
  CHECK(required_identity("reg:5000/ai/paddle", "3.2.0", true) == "reg:5000/ai/paddle");
  CHECK_FALSE(identity_matches("reg:5000/ai/paddle:3.1.0", required_identity("reg:5000/ai/paddle", "3.2.0", false)));
  CHECK(identity_matches("reg:5000/ai/paddle:3.1.0", required_identity("reg:5000/ai/paddle", "3.2.0", true)));
  CHECK(identity_matches("reg:5000/ai/paddle", required_identity("reg:5000/ai/paddle", "", false)));
  CHECK_FALSE(identity_matches("reg:5000/ai/other:3.2.0", required_identity("reg:5000/ai/paddle", "", false)));
}
