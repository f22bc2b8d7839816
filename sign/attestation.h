// cosign-format attestations: an in-toto Statement, wrapped in a DSSE
// envelope (dsse.h) signed with the release key, stored as one layer of the
// OCI manifest under the tag `sha256-<hex>.att` in the image's repository —
// the tag scheme `cosign attest` writes and `cosign verify-attestation --key K
// --type spdxjson` reads.
//
//   Statement  {"_type":"https://in-toto.io/Statement/v0.1",
//               "predicateType":"https://spdx.dev/Document",
//               "subject":[{"name":"REGISTRY/REPO","digest":{"sha256":"<hex>"}}],
//               "predicate":{…the SPDX document…}}
//   Layer      media type application/vnd.dsse.envelope.v1+json, blob = the
//              envelope, annotations predicateType=<type> and
//              dev.cosignproject.cosign/signature="" (cosign writes it empty:
//              the signature is inside the envelope).
//   Manifest   as for `.sig` (sig_manifest.h): an empty OCI config listing the
//              layer digests, layers in order (earlier attestations kept).
//
// Contracts
//   - attach_attestation() is idempotent: a layer whose envelope carries the
//     same statement and verifies with the key means nothing is written. After
//     its PUT it re-reads the `.att` manifest and re-appends its layer if a
//     concurrent writer dropped it (registries have no compare-and-swap).
//   - check_attestation() accepts the NEWEST layer that: has the predicate
//     type, is an in-toto DSSE envelope whose bytes match their digest,
//     verifies with the key over PAE, and names the digest as a subject.
//     Every rejected layer yields one reason. At most kMaxAttestationLayers
//     layers of the type are read, newest first (each is a blob fetch and a
//     signature check: a `.att` of thousands of layers would stall verify);
//     the rest are counted in `not_examined` and the summary says so. The
//     same cap holds for read_attestation_unverified() and for
//     attach_attestation()'s look for an equal layer (past it, one more is
//     appended: a duplicate, never a loss).
#pragma once
#include <openssl/types.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "image/repository.h"

namespace imgtool::sign {

inline constexpr const char* kDsseMediaType = "application/vnd.dsse.envelope.v1+json";
inline constexpr const char* kPredicateTypeAnnotation = "predicateType";
inline constexpr const char* kInTotoStatementV01 = "https://in-toto.io/Statement/v0.1";
inline constexpr const char* kInTotoStatementV1 = "https://in-toto.io/Statement/v1";
inline constexpr const char* kSpdxPredicateType = "https://spdx.dev/Document";
inline constexpr size_t kMaxAttestationLayers = 64;  // layers read per check, newest first

// "sha256:<hex>" -> "sha256-<hex>.att". InputError for a non-sha256 digest.
std::string attestation_tag(const std::string& manifest_digest);

struct Subject {
  std::string name;    // "REGISTRY/REPO"
  std::string sha256;  // hex of the manifest digest
};

struct Statement {
  std::string type = kInTotoStatementV01;
  std::string predicate_type;
  std::vector<Subject> subjects;
  nlohmann::ordered_json predicate;
  std::string serialize() const;  // compact, keys _type, predicateType, subject, predicate
  bool names_digest(const std::string& manifest_digest) const;
};
// CheckFailed naming the field for anything but an in-toto Statement v0.1/v1.
Statement parse_statement(const std::string& bytes);

struct AttestRequest {
  std::string manifest_digest;  // "sha256:<hex>" of the image manifest
  std::string subject_name;     // default: repo.name()
  std::string predicate_type;
  nlohmann::ordered_json predicate;
};

struct AttestResult {
  std::string attestation_tag;  // "sha256-<hex>.att"
  bool already_attested = false;
  size_t layers = 0;
};

AttestResult attach_attestation(image::Repository& repo, EVP_PKEY& private_key, const AttestRequest& req);

struct AttestationCheck {
  bool ok = false;
  bool found = false;  // a `.att` manifest with a layer of the predicate type exists
  std::string attestation_tag;
  size_t layers = 0;        // layers of the predicate type examined
  size_t not_examined = 0;  // older layers of the type past kMaxAttestationLayers
  Statement statement;      // the accepted one (ok) or the newest readable one
  bool have_statement = false;
  std::vector<std::string> reasons;  // one per rejected layer, or why none was found
  std::string summary() const;
};

AttestationCheck check_attestation(image::Repository& repo, const std::string& manifest_digest, EVP_PKEY& public_key,
                                   const std::string& predicate_type);

// EVERY layer of the type that check_attestation would accept (up to kMaxAttestationLayers), for a
// caller that orders them by what they say when signed (smoke evidence: its `attested` time), never
// by their position in the manifest, which any registry writer can reorder without the key.
// `summary` (optional) says what was examined and rejected, as check_attestation's result does.
std::vector<Statement> verified_attestations(image::Repository& repo, const std::string& manifest_digest,
                                             EVP_PKEY& public_key, const std::string& predicate_type,
                                             AttestationCheck* summary = nullptr);

// The newest statement of `predicate_type` for the digest WITHOUT checking a
// signature (`imgtool sbom REF` without --key). nullopt if none is readable.
std::optional<Statement> read_attestation_unverified(image::Repository& repo, const std::string& manifest_digest,
                                                     const std::string& predicate_type);

}  // namespace imgtool::sign
