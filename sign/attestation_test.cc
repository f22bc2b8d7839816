// DSSE envelopes and cosign-format attestations, in memory (MemoryRepository):
// PAE bytes, sign/verify round trip, tampering, another image's attestation.
#include "sign/attestation.h"

#include <doctest/doctest.h>

#include "core/error.h"
#include "core/hash.h"
#include "sign/dsse.h"
#include "sign/ecdsa.h"
#include "sign/keys.h"
#include "sign/sig_manifest.h"
#include "sign/sign_image.h"

using namespace imgtool;
using namespace imgtool::sign;

namespace {
const std::string kDigest = sha256_digest("an image manifest");
const std::string kOther = sha256_digest("another image manifest");

nlohmann::ordered_json spdx_predicate(const std::string& pkg) {
  return {{"spdxVersion", "SPDX-2.3"}, {"packages", {{{"name", pkg}}}}};
}

// Replaces the blob of the newest .att layer with `bytes` (a tampering registry).
void replace_newest_layer(image::MemoryRepository& repo, const std::string& digest, const std::string& bytes) {
  std::string tag = attestation_tag(digest);
  auto layers = repo.manifest(tag)->layers();
  image::Descriptor d = layers.back();
  d.digest = sha256_digest(bytes);
  d.size = static_cast<int64_t>(bytes.size());
  layers.back() = d;
  repo.put_blob(d, bytes);
  SignatureManifest sm = build_signature_manifest(layers);
  repo.put_blob(sm.config_descriptor, sm.config);
  repo.put_manifest(sm.manifest, tag);
}
}  // namespace

TEST_CASE("PAE is DSSEv1 SP len SP type SP len SP body (the spec's example)") {
  CHECK(pae("http://example.com/HelloWorld", "hello world") ==
        "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  CHECK(pae("", "") == "DSSEv1 0  0 ");
}

TEST_CASE("DSSE: sign, serialize, parse, verify; tampered payload or type or wrong key fails") {
  Pkey key = generate_key(), other = generate_key();
  Envelope e = sign_envelope(*key, kInTotoPayloadType, "{\"a\":1}");
  REQUIRE(e.signatures.size() == 1);
  CHECK(e.signatures[0].keyid.empty());
  // The signature is over PAE, not over the bare payload.
  auto der = base64_decode(e.signatures[0].sig);
  REQUIRE(der);
  CHECK(verify_der(*key, pae(kInTotoPayloadType, "{\"a\":1}"), *der));
  CHECK_FALSE(verify_der(*key, "{\"a\":1}", *der));

  Envelope back = parse_envelope(e.serialize());
  CHECK(back.payload == "{\"a\":1}");
  CHECK(back.payload_type == kInTotoPayloadType);
  CHECK(verify_envelope(*key, back));
  CHECK_FALSE(verify_envelope(*other, back));
  Envelope tampered = back;
  tampered.payload = "{\"a\":2}";
  CHECK_FALSE(verify_envelope(*key, tampered));
  Envelope retyped = back;
  retyped.payload_type = "text/plain";
  CHECK_FALSE(verify_envelope(*key, retyped));
}

TEST_CASE("DSSE parse is strict") {
  CHECK_THROWS_AS(parse_envelope("not json"), CheckFailed);
  CHECK_THROWS_AS(parse_envelope(R"({"payloadType":"x","payload":"e30=","signatures":[],"extra":1})"), CheckFailed);
  CHECK_THROWS_AS(parse_envelope(R"({"payloadType":"x","payload":"!!","signatures":[]})"), CheckFailed);
  CHECK_THROWS_AS(parse_envelope(R"({"payloadType":"x","payload":"e30=","signatures":[{"sig":"@@"}]})"), CheckFailed);
  CHECK_NOTHROW(parse_envelope(R"({"payloadType":"x","payload":"e30=","signatures":[{"sig":"e30="}]})"));
}

TEST_CASE("in-toto statement: serialize/parse round trip, subject digest") {
  Statement s{kInTotoStatementV01, kSpdxPredicateType, {{"reg/ai/paddle", kDigest.substr(7)}}, spdx_predicate("zlib")};
  std::string bytes = s.serialize();
  CHECK(bytes.rfind(R"({"_type":"https://in-toto.io/Statement/v0.1","predicateType":"https://spdx.dev/Document",)",
                    0) == 0);
  Statement back = parse_statement(bytes);
  CHECK(back.predicate == s.predicate);
  CHECK(back.names_digest(kDigest));
  CHECK_FALSE(back.names_digest(kOther));
  CHECK_THROWS_AS(
      parse_statement(
          R"({"_type":"https://example.com/x","predicateType":"p","subject":[{"digest":{}}],"predicate":{}})"),
      CheckFailed);
  CHECK_THROWS_AS(
      parse_statement(R"({"_type":"https://in-toto.io/Statement/v1","predicateType":"p","subject":[],"predicate":{}})"),
      CheckFailed);
}

TEST_CASE("attach_attestation writes the cosign .att layout; check_attestation accepts it") {
  image::MemoryRepository repo("127.0.0.1:5000/ai/paddle");
  Pkey key = generate_key(), other = generate_key();
  AttestResult r = attach_attestation(repo, *key, {kDigest, "", kSpdxPredicateType, spdx_predicate("zlib")});
  CHECK(r.attestation_tag == "sha256-" + kDigest.substr(7) + ".att");
  CHECK_FALSE(r.already_attested);
  auto m = repo.manifest(r.attestation_tag);
  REQUIRE(m);
  CHECK(m->media_type == image::media::kOciManifest);
  REQUIRE(m->layers().size() == 1);
  auto layer = m->layers()[0];
  CHECK(layer.media_type == std::string("application/vnd.dsse.envelope.v1+json"));
  CHECK(layer.annotations.at("predicateType") == "https://spdx.dev/Document");
  CHECK(layer.annotations.at("dev.cosignproject.cosign/signature").empty());

  SUBCASE("valid with the key; subject and predicate come back") {
    AttestationCheck c = check_attestation(repo, kDigest, *key, kSpdxPredicateType);
    CHECK(c.ok);
    CHECK(c.statement.subjects.at(0).name == "127.0.0.1:5000/ai/paddle");
    CHECK(c.statement.predicate["packages"][0]["name"] == "zlib");
  }
  SUBCASE("idempotent: the same statement again writes nothing") {
    AttestResult again = attach_attestation(repo, *key, {kDigest, "", kSpdxPredicateType, spdx_predicate("zlib")});
    CHECK(again.already_attested);
    CHECK(repo.manifest(r.attestation_tag)->layers().size() == 1);
  }
  SUBCASE("a newer statement is appended and is the one accepted") {
    attach_attestation(repo, *key, {kDigest, "", kSpdxPredicateType, spdx_predicate("openssl")});
    CHECK(repo.manifest(r.attestation_tag)->layers().size() == 2);
    CHECK(check_attestation(repo, kDigest, *key, kSpdxPredicateType).statement.predicate["packages"][0]["name"] ==
          "openssl");
  }
  SUBCASE("wrong key fails with the reason") {
    AttestationCheck c = check_attestation(repo, kDigest, *other, kSpdxPredicateType);
    CHECK_FALSE(c.ok);
    CHECK(c.found);
    CHECK(c.summary().find("does not verify with the given key") != std::string::npos);
  }
  SUBCASE("a tampered statement (re-wrapped, old signature) fails") {
    Envelope e = parse_envelope(repo.blob(repo.manifest(r.attestation_tag)->layers()[0]));
    Statement st = parse_statement(e.payload);
    st.predicate = spdx_predicate("evil");
    e.payload = st.serialize();
    replace_newest_layer(repo, kDigest, e.serialize());
    AttestationCheck c = check_attestation(repo, kDigest, *key, kSpdxPredicateType);
    CHECK_FALSE(c.ok);
    CHECK(c.summary().find("does not verify") != std::string::npos);
  }
  SUBCASE("another image's attestation copied under this digest's tag fails on the subject") {
    attach_attestation(repo, *key, {kOther, "", kSpdxPredicateType, spdx_predicate("zlib")});
    auto theirs = repo.manifest(attestation_tag(kOther));
    repo.put_manifest(*theirs, r.attestation_tag);
    AttestationCheck c = check_attestation(repo, kDigest, *key, kSpdxPredicateType);
    CHECK_FALSE(c.ok);
    CHECK(c.summary().find("another image") != std::string::npos);
  }
  SUBCASE("no attestation for an unattested digest") {
    AttestationCheck c = check_attestation(repo, kOther, *key, kSpdxPredicateType);
    CHECK_FALSE(c.ok);
    CHECK_FALSE(c.found);
    CHECK_FALSE(read_attestation_unverified(repo, kOther, kSpdxPredicateType));
    CHECK(read_attestation_unverified(repo, kDigest, kSpdxPredicateType));
  }
}

namespace {

// A repository that counts blob reads (each is a registry GET in the real one).
struct CountingRepository : image::MemoryRepository {
  using image::MemoryRepository::MemoryRepository;
  size_t reads = 0;
  std::string blob(const image::Descriptor& d) override {
    ++reads;
    return image::MemoryRepository::blob(d);
  }
};

// Appends n layers of `type` whose blobs are not envelopes (a hostile or broken writer).
void append_junk_layers(image::MemoryRepository& repo, const std::string& digest, size_t n, const std::string& type) {
  std::string tag = attestation_tag(digest);
  auto layers = repo.manifest(tag)->layers();
  for (size_t i = 0; i < n; ++i) {
    std::string bytes = "junk " + std::to_string(i);
    image::Descriptor d{
        kDsseMediaType, sha256_digest(bytes), static_cast<int64_t>(bytes.size()), {{kPredicateTypeAnnotation, type}}};
    repo.put_blob(d, bytes);
    layers.push_back(d);
  }
  SignatureManifest sm = build_signature_manifest(layers);
  repo.put_blob(sm.config_descriptor, sm.config);
  repo.put_manifest(sm.manifest, tag);
}

}  // namespace

TEST_CASE("a .att with thousands of layers: the newest 64 are read, and the row says so") {
  // Before: every layer of the type was read and checked (a blob GET and a signature check each):
  // 2001 reads here, and a hostile .att of that size stalled verify.
  Pkey key = generate_key();
  CountingRepository repo("reg.example/ai/paddle");
  attach_attestation(
      repo, *key,
      {.manifest_digest = kDigest, .predicate_type = kSpdxPredicateType, .predicate = spdx_predicate("numpy")});
  append_junk_layers(repo, kDigest, 2000, kSpdxPredicateType);
  append_junk_layers(repo, kDigest, 100, "https://example.com/other");  // another type: never read, never counted
  repo.reads = 0;
  AttestationCheck c = check_attestation(repo, kDigest, *key, kSpdxPredicateType);
  CHECK_FALSE(c.ok);  // the one valid layer is the oldest, past the cap
  CHECK(repo.reads == kMaxAttestationLayers);
  CHECK(c.layers == kMaxAttestationLayers);
  CHECK(c.not_examined == 2001 - kMaxAttestationLayers);
  CHECK(c.summary().find("only the newest 64 of 2001 layers examined") != std::string::npos);

  repo.reads = 0;
  CHECK_FALSE(read_attestation_unverified(repo, kDigest, kSpdxPredicateType));
  CHECK(repo.reads == kMaxAttestationLayers);

  // A valid attestation among the newest 64 is found.
  attach_attestation(
      repo, *key,
      {.manifest_digest = kDigest, .predicate_type = kSpdxPredicateType, .predicate = spdx_predicate("numpy")});
  repo.reads = 0;
  c = check_attestation(repo, kDigest, *key, kSpdxPredicateType);
  CHECK(c.ok);
  CHECK(repo.reads == 1);
}
