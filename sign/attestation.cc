#include "sign/attestation.h"

#include <chrono>
#include <functional>
#include <thread>

#include "core/error.h"
#include "core/hash.h"
#include "core/json_file.h"
#include "sign/dsse.h"
#include "sign/sig_manifest.h"

namespace imgtool::sign {

using nlohmann::ordered_json;

std::string attestation_tag(const std::string& digest) {
  if (!is_sha256_digest(digest))
    throw InputError("attestation tag: expected a sha256:<hex> digest, found '" + digest + "'");
  return "sha256-" + digest.substr(7) + ".att";
}

std::string Statement::serialize() const {
  ordered_json subs = ordered_json::array();
  for (const auto& s : subjects) subs.push_back({{"name", s.name}, {"digest", {{"sha256", s.sha256}}}});
  ordered_json j = {{"_type", type}, {"predicateType", predicate_type}, {"subject", subs}, {"predicate", predicate}};
  return j.dump();
}

bool Statement::names_digest(const std::string& digest) const {
  for (const auto& s : subjects)
    if ("sha256:" + s.sha256 == digest) return true;
  return false;
}

namespace {

[[noreturn]] void bad_statement(const std::string& expected, const std::string& found) {
  throw CheckFailed("in-toto statement: expected " + expected + ", found " + found);
}

std::string str(const ordered_json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string())
    bad_statement(std::string("a string \"") + key + "\"", it == j.end() ? "none" : it->dump());
  return it->get<std::string>();
}

Subject parse_subject(const ordered_json& s) {
  if (!s.is_object() || !s.contains("digest") || !s["digest"].is_object())
    bad_statement("subject {name, digest}", s.dump());
  Subject out{s.contains("name") ? str(s, "name") : "", ""};
  if (s["digest"].contains("sha256")) out.sha256 = str(s["digest"], "sha256");
  return out;
}

}  // namespace

Statement parse_statement(const std::string& bytes) {
  ordered_json j = parse_ordered_json_or_discarded(bytes);
  if (!j.is_object()) bad_statement("a JSON object", "invalid JSON");
  Statement s;
  s.type = str(j, "_type");
  if (s.type != kInTotoStatementV01 && s.type != kInTotoStatementV1)
    bad_statement(std::string("_type ") + kInTotoStatementV01 + " or " + kInTotoStatementV1, s.type);
  s.predicate_type = str(j, "predicateType");
  if (!j.contains("subject") || !j["subject"].is_array() || j["subject"].empty())
    bad_statement("a non-empty subject array", "none");
  for (const auto& sub : j["subject"]) s.subjects.push_back(parse_subject(sub));
  if (!j.contains("predicate")) bad_statement("a predicate", "none");
  s.predicate = j["predicate"];
  return s;
}

namespace {

std::vector<image::Descriptor> attestation_layers(image::Repository& repo, const std::string& tag) {
  auto m = repo.manifest(tag);
  std::vector<image::Descriptor> keep;
  if (m)
    for (const auto& l : m->layers())
      if (l.media_type == kDsseMediaType) keep.push_back(l);
  return keep;
}

std::string predicate_type_of(const image::Descriptor& l) {
  auto it = l.annotations.find(kPredicateTypeAnnotation);
  return it == l.annotations.end() ? "" : it->second;
}

// The layers that may be `type` (annotated so, or not annotated), newest first, at most
// kMaxAttestationLayers; `*rest` (when given) counts the older ones left out.
std::vector<image::Descriptor> newest_of_type(const std::vector<image::Descriptor>& layers, const std::string& type,
                                              size_t* rest = nullptr) {
  std::vector<image::Descriptor> out;
  size_t left_out = 0;
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    if (std::string pt = predicate_type_of(*it); !pt.empty() && pt != type) continue;
    if (out.size() < kMaxAttestationLayers)
      out.push_back(*it);
    else
      ++left_out;
  }
  if (rest) *rest = left_out;
  return out;
}

// The envelope of one layer; throws CheckFailed/Error when unreadable.
Envelope read_envelope(image::Repository& repo, const image::Descriptor& l) {
  std::string bytes = repo.blob(l);
  if (sha256_digest(bytes) != l.digest) throw CheckFailed("envelope bytes do not match their digest (tampered)");
  return parse_envelope(bytes);
}

bool has_equal(image::Repository& repo, const std::vector<image::Descriptor>& layers, const std::string& statement,
               EVP_PKEY& key) {
  for (const auto& l : layers) {
    try {
      Envelope e = read_envelope(repo, l);
      if (e.payload == statement && verify_envelope(key, e)) return true;
    } catch (const std::runtime_error&) {
    }
  }
  return false;
}

void put_layers(image::Repository& repo, const std::string& tag, std::vector<image::Descriptor> layers,
                const image::Descriptor& mine, const std::string& bytes) {
  layers.push_back(mine);
  SignatureManifest sm = build_signature_manifest(layers);
  if (!repo.has_blob(mine)) repo.put_blob(mine, bytes);
  if (!repo.has_blob(sm.config_descriptor)) repo.put_blob(sm.config_descriptor, sm.config);
  repo.put_manifest(sm.manifest, tag);
}

}  // namespace

AttestResult attach_attestation(image::Repository& repo, EVP_PKEY& key, const AttestRequest& req) {
  Statement st{kInTotoStatementV01,
               req.predicate_type,
               {{req.subject_name.empty() ? repo.name() : req.subject_name, req.manifest_digest.substr(7)}},
               req.predicate};
  AttestResult r{attestation_tag(req.manifest_digest)};
  std::string statement = st.serialize();
  auto layers = attestation_layers(repo, r.attestation_tag);
  if (has_equal(repo, newest_of_type(layers, req.predicate_type), statement, key))
    return {r.attestation_tag, true, layers.size()};
  std::string bytes = sign_envelope(key, kInTotoPayloadType, statement).serialize();
  image::Descriptor mine{kDsseMediaType,
                         sha256_digest(bytes),
                         static_cast<int64_t>(bytes.size()),
                         {{kPredicateTypeAnnotation, req.predicate_type}, {kSignatureAnnotation, ""}}};
  for (int attempt = 1; attempt <= 6; ++attempt) {  // re-append if a concurrent writer dropped ours
    put_layers(repo, r.attestation_tag, layers, mine, bytes);
    layers = attestation_layers(repo, r.attestation_tag);
    if (has_equal(repo, newest_of_type(layers, req.predicate_type), statement, key))
      return {r.attestation_tag, false, layers.size()};
    std::this_thread::sleep_for(std::chrono::milliseconds(30 * attempt));
  }
  throw Error(repo.name() + ":" + r.attestation_tag +
                  ": expected the new attestation to stay after writing it, "
                  "found it replaced by another writer 6 times; re-run",
              true);
}

std::string AttestationCheck::summary() const {
  if (ok) return "valid attestation " + attestation_tag + " (" + statement.predicate_type + ")";
  std::string s = layers == 0 ? "no attestation" : std::to_string(layers) + " attestation layer(s), none valid";
  for (const auto& r : reasons) s += "; " + r;
  if (not_examined)
    s += "; only the newest " + std::to_string(layers) + " of " + std::to_string(layers + not_examined) +
         " layers examined (at most " + std::to_string(kMaxAttestationLayers) + " are read)";
  return s;
}

namespace {

// Empty if layer `l` is acceptable; else why not. Fills `st` when readable.
std::string check_layer(image::Repository& repo, const image::Descriptor& l, const std::string& digest, EVP_PKEY& key,
                        const std::string& type, Statement& st, bool& have) {
  Envelope e;
  try {
    e = read_envelope(repo, l);
  } catch (const std::runtime_error& x) {
    return std::string("layer ") + l.digest.substr(0, 19) + ": " + x.what();
  }
  if (e.payload_type != kInTotoPayloadType)
    return "envelope payloadType is " + e.payload_type + ", expected " + kInTotoPayloadType;
  bool verified = verify_envelope(key, e);
  try {
    st = parse_statement(e.payload);
    have = true;
  } catch (const CheckFailed& x) {
    return x.what();
  }
  if (!verified) return "DSSE signature does not verify with the given key (wrong key, or statement tampered)";
  if (st.predicate_type != type) return "statement predicateType is " + st.predicate_type + ", expected " + type;
  if (!st.names_digest(digest)) {
    std::string names;
    for (const auto& s : st.subjects) names += (names.empty() ? "" : ", ") + ("sha256:" + s.sha256);
    return "attestation subject is " + names + ", not the verified manifest " + digest +
           " (an attestation of another image)";
  }
  return "";
}

}  // namespace

namespace {

// The layers of `type`, newest first (at most kMaxAttestationLayers), each checked; `on_valid` gets
// every one that holds and returns true to stop there. `c` counts what was examined and why a layer
// was rejected.
void walk_layers(image::Repository& repo, const std::string& digest, EVP_PKEY& key, const std::string& type,
                 AttestationCheck& c, const std::function<bool(const Statement&)>& on_valid) {
  c.attestation_tag = attestation_tag(digest);
  for (const auto& l : newest_of_type(attestation_layers(repo, c.attestation_tag), type, &c.not_examined)) {
    ++c.layers;
    c.found = true;
    Statement st;
    bool have = false;
    std::string why = check_layer(repo, l, digest, key, type, st, have);
    if (have && !c.have_statement) c.statement = st, c.have_statement = true;
    if (why.empty() && on_valid(st)) return;
    if (!why.empty()) c.reasons.push_back(why);
  }
  if (c.layers == 0)
    c.reasons.push_back("no " + c.attestation_tag + " with a " + type + " attestation in " + repo.name());
}

}  // namespace

AttestationCheck check_attestation(image::Repository& repo, const std::string& digest, EVP_PKEY& key,
                                   const std::string& type) {
  AttestationCheck c;
  walk_layers(repo, digest, key, type, c, [&](const Statement& st) {
    c.ok = true;
    c.statement = st;
    c.reasons.clear();
    return true;
  });
  return c;
}

std::vector<Statement> verified_attestations(image::Repository& repo, const std::string& digest, EVP_PKEY& key,
                                             const std::string& type, AttestationCheck* summary) {
  AttestationCheck c;
  std::vector<Statement> out;
  walk_layers(repo, digest, key, type, c, [&](const Statement& st) {
    out.push_back(st);
    return false;
  });
  if (!out.empty()) c.ok = true, c.statement = out.front(), c.have_statement = true;
  if (summary) *summary = c;
  return out;
}

std::optional<Statement> read_attestation_unverified(image::Repository& repo, const std::string& digest,
                                                     const std::string& type) {
  for (const auto& l : newest_of_type(attestation_layers(repo, attestation_tag(digest)), type)) {
    try {
      Statement st = parse_statement(read_envelope(repo, l).payload);
      if (st.predicate_type == type && st.names_digest(digest)) return st;
    } catch (const std::runtime_error&) {
    }
  }
  return std::nullopt;
}

}  // namespace imgtool::sign
