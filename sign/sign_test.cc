// Unit tests of sign/: keys, payloads, signatures (cross-checked with the
// openssl CLI) and signature manifests on a memory repository (promotion: release/release_test.cc).
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
#include "sign/sig_manifest.h"
#include "sign/sign_image.h"
#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::sign;
using imgtool::testing::ScratchDir;

namespace {

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return st.st_mode & 07777;
}

image::Manifest fake_image(image::MemoryRepository& repo, const std::string& seed) {
  std::string layer = "layer-" + seed, config = "{\"seed\":\"" + seed + "\"}";
  image::Descriptor l{image::media::kOciLayerGzip, sha256_digest(layer), (int64_t)layer.size(), {}};
  image::Descriptor c{image::media::kOciConfig, sha256_digest(config), (int64_t)config.size(), {}};
  repo.put_blob(l, layer);
  repo.put_blob(c, config);
  nlohmann::json m = {{"schemaVersion", 2}, {"mediaType", image::media::kOciManifest}, {"config", c}, {"layers", {l}}};
  return {m.dump(), image::media::kOciManifest};
}

std::string identity(image::MemoryRepository& r, const std::string& tag) { return r.name() + ":" + tag; }

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
  for (std::vector<std::string> how :
       {std::vector<std::string>{"-scrypt"}, {"-v2prf", "hmacWithSHA256", "-iter", "2048"}}) {
    fs::path old = d.path / ("old" + how[0] + ".key");
    std::vector<std::string> argv{
        "openssl", "pkcs8",      "-topk8",   "-v2",          "aes-256-cbc", "-in", (d.path / "plain.key").string(),
        "-out",    old.string(), "-passout", "pass:old-pass"};
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
  const std::string n15("\x02\x03\x00\x80\x00", 5),
      n22("\x02\x03\x40\x00\x00", 5);  // INTEGER 2^15 -> 2^22 (4 GiB at r=8)
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
  std::string pem =
      "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\neyJrZGYiOnt9fQ==\n-----END ENCRYPTED SIGSTORE PRIVATE "
      "KEY-----\n";
  CHECK_THROWS_WITH_AS(load_private_key_pem(pem, "", "k"), doctest::Contains("cosign import-key-pair"), InputError);
}

TEST_CASE("payload bytes are exactly cosign's and the parser is strict") {
  Payload p{"reg:5000/ai/paddle:3.1.0", "sha256:" + std::string(64, 'a'), {}};
  CHECK(p.serialize() ==
        "{\"critical\":{\"identity\":{\"docker-reference\":\"reg:5000/ai/paddle:3.1.0\"},"
        "\"image\":{\"docker-manifest-digest\":\"sha256:" +
            std::string(64, 'a') +
            "\"},"
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
  bad("\"docker-manifest-digest\":",
      "\"docker-manifest-digest\":\"sha256:" + std::string(64, 'b') + "\",\"docker-manifest-digest\":");
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
  auto s = run({"openssl", "dgst", "-sha256", "-sign", f.private_key.string(), "-out", (d.path / "sig2.der").string(),
                (d.path / "payload").string()});
  REQUIRE(s.ok());
  CHECK(verify_der(*pub, payload, read_file(d.path / "sig2.der")));
}

TEST_CASE("signing appends to the .sig manifest and check_signature rejects faults") {
  image::MemoryRepository repo("127.0.0.1:5000/ai/paddle");
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
    repo.store().put_manifest(*repo.manifest(s1.signature_tag), signature_tag(b.digest()));
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

TEST_CASE("two signers on one digest keep both signatures (a lost .sig update is repaired)") {
  // Deterministic interleaving: the rival read the .sig manifest BEFORE our PUT
  // and writes it (with only its own layer added) right AFTER our PUT.
  struct LostUpdate : image::MemoryRepository {
    using image::MemoryRepository::MemoryRepository;
    EVP_PKEY* rival = nullptr;
    std::string digest;
    bool raced = false;
    void put_manifest(const image::Manifest& m, const std::string& tag) override {
      if (raced || tag.find(".sig") == std::string::npos) return image::MemoryRepository::put_manifest(m, tag);
      raced = true;
      image::MemoryRepository stale(name(), store().snapshot());  // what the rival read
      sign_digest(stale, *rival, {digest, name() + ":rival", {}});
      image::MemoryRepository::put_manifest(m, tag);  // ours lands ...
      store().add_blobs_of(stale.store());
      image::MemoryRepository::put_manifest(*stale.manifest(tag), tag);  // ... and the rival's stale PUT replaces it
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
  struct Locked : image::MemoryRepository {  // thread-safe, and slow enough for the signers to interleave
    using image::MemoryRepository::MemoryRepository;
    std::mutex mu;
    std::optional<image::Manifest> manifest(const std::string& r) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::lock_guard<std::mutex> l(mu);
      return image::MemoryRepository::manifest(r);
    }
    std::string blob(const image::Descriptor& d) override {
      std::lock_guard<std::mutex> l(mu);
      return image::MemoryRepository::blob(d);
    }
    bool has_blob(const image::Descriptor& d) override {
      std::lock_guard<std::mutex> l(mu);
      return image::MemoryRepository::has_blob(d);
    }
    void put_blob(const image::Descriptor& d, const std::string& b) override {
      std::lock_guard<std::mutex> l(mu);
      image::MemoryRepository::put_blob(d, b);
    }
    void put_manifest(const image::Manifest& m, const std::string& t) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::lock_guard<std::mutex> l(mu);
      image::MemoryRepository::put_manifest(m, t);
    }
  } repo("127.0.0.1:5000/ai/paddle");
  image::Manifest a = fake_image(repo, "a");
  repo.put_manifest(a, "");
  std::vector<Pkey> keys;
  for (int i = 0; i < 6; ++i) keys.push_back(generate_key());
  std::vector<std::thread> signers;
  for (int i = 0; i < 6; ++i)
    signers.emplace_back([&, i] {
      sign_digest(repo, *keys[i], {a.digest(), identity(repo, "s" + std::to_string(i)), {}});
    });
  for (auto& t : signers) t.join();
  for (int i = 0; i < 6; ++i)
    CHECK_MESSAGE(check_signature(repo, a.digest(), *keys[i], repo.name()).ok, "signer " << i);
  CHECK(repo.manifest(signature_tag(a.digest()))->layers().size() == 6);
}
