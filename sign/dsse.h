// DSSE envelopes (secure-systems-lab/dsse, "envelope.md" v1.0.0), the form
// cosign stores attestations in:
//   {"payloadType":"application/vnd.in-toto+json","payload":"<base64>",
//    "signatures":[{"keyid":"","sig":"<base64 DER ECDSA>"}]}
// What is signed is NOT the payload but its pre-authentication encoding:
//   PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
// (LEN = decimal byte count, no leading zeros), with ECDSA P-256/SHA-256 in
// DER (sign/ecdsa.h), as for cosign's `.sig` layers.
//
// Contracts
//   - parse_envelope() is strict: an object with exactly payloadType, payload
//     and signatures (strings / array of {keyid?, sig}), payload and sig
//     standard base64; any deviation is a CheckFailed naming the field.
//   - verify_envelope() is true if ANY signature verifies over PAE with the key;
//     malformed signatures are false, never a throw.
#pragma once
#include <openssl/types.h>

#include <string>
#include <vector>

namespace imgtool::sign {

inline constexpr const char* kInTotoPayloadType = "application/vnd.in-toto+json";

std::string pae(const std::string& payload_type, const std::string& payload);

struct DsseSignature {
  std::string keyid;  // "" as cosign writes for key-based signing
  std::string sig;    // base64(DER)
};

struct Envelope {
  std::string payload_type;
  std::string payload;  // decoded bytes
  std::vector<DsseSignature> signatures;

  std::string serialize() const;  // compact JSON, keys in the order above
};

Envelope sign_envelope(EVP_PKEY& private_key, const std::string& payload_type, const std::string& payload);
bool verify_envelope(EVP_PKEY& public_key, const Envelope& e);
Envelope parse_envelope(const std::string& bytes);

}  // namespace imgtool::sign
