// imgtool evidence PROBE.json [--subject NAME@sha256:…] [--source TEXT] [--key K]: a probe document
// (probe.py's output: a Kubernetes Job's log, bench/gpu-probe.sh on a GPU machine) turned into the
// hardware-evidence statement a smoke attests (smoke/evidence.h), with no engine and no registry.
// Prints the in-toto statement; with --key, the DSSE envelope signed with it (what `.att` holds).
#include <iostream>

#include "cli/subcommand.h"
#include "core/error.h"
#include "core/json_file.h"
#include "sign/attestation.h"
#include "sign/dsse.h"
#include "sign/keys.h"
#include "smoke/evidence.h"

namespace imgtool::cli {
namespace {

struct EvidenceFlags {
  std::string probe, subject, source, key, passphrase_env;
};

// NAME@sha256:<hex> -> the in-toto subject; none when not given.
std::vector<sign::Subject> subjects(const std::string& s) {
  if (s.empty()) return {};
  auto at = s.rfind("@sha256:");
  if (at == std::string::npos || s.size() != at + 8 + 64)
    throw InputError("--subject: expected NAME@sha256:<64 hex>, found '" + s + "'");
  return {{s.substr(0, at), s.substr(at + 8)}};
}

int run_evidence(const EvidenceFlags& f) {
  nlohmann::json probe = read_json_file(f.probe, "the probe's JSON document");
  if (!probe.is_object())
    throw InputError(f.probe + ": expected the probe's JSON document (an object), found a JSON " + probe.type_name());
  smoke::SmokeEvidence e = smoke::evidence_from_probe(probe, f.source.empty() ? "probe document " + f.probe : f.source);
  sign::Statement st{sign::kInTotoStatementV01, smoke::kSmokePredicateType, subjects(f.subject),
                     smoke::to_predicate(e)};
  std::cerr << "evidence: " << e.summary() << "\n";
  if (f.key.empty()) {
    std::cout << nlohmann::json::parse(st.serialize()).dump(2) << "\n";
    return 0;
  }
  sign::Pkey key = sign::load_signing_key(f.key, f.passphrase_env);
  std::cout << sign::sign_envelope(*key, sign::kInTotoPayloadType, st.serialize()).serialize() << "\n";
  return 0;
}

Registration evidence_registration(
    {"evidence", "Turn a probe document into the signed hardware-evidence statement a smoke attests",
     [](CLI::App& sub) -> Action {
       auto f = std::make_shared<EvidenceFlags>();
       sub.add_option("probe", f->probe, "the probe's JSON document (probe.py's output)")->required();
       sub.add_option("--subject", f->subject, "REGISTRY/REPO@sha256:<hex> the statement is about");
       sub.add_option("--source", f->source, "where the document came from (default: its file name)");
       sub.add_option("--key", f->key, "sign the statement (DSSE) with this private key (a file, or env://VAR)");
       sub.add_option("--passphrase-env", f->passphrase_env, "env var holding --key's passphrase");
       return [f] { return run_evidence(*f); };
     }});

}  // namespace
}  // namespace imgtool::cli
