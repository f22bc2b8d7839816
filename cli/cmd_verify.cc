// imgtool verify REF --key PUB [--no-smoke] [--json] [--junit FILE]:
// flags -> verify::VerifyRequest -> verify::verify_image (verify/verify_image.h: signature, claims vs
// contents, SBOM, GPU smoke) -> the table, JSON or JUnit.
#include <fstream>
#include <iostream>
#include <optional>

#include "cli/policy_flags.h"
#include "cli/sign_common.h"
#include "cli/smoke_flags.h"
#include "cli/subcommand.h"
#include "core/fs.h"
#include "sign/keys.h"
#include "verify/report_render.h"
#include "verify/verify_image.h"

namespace imgtool::cli {
namespace {

struct VerifyFlags {
  std::string ref, key, junit;
  bool no_smoke = false, json = false, no_signature = false;
  PolicyFlags policy;  // the one trust policy (cli/policy_flags.h), as promote, select, nightly promote
  RegistryFlags registry;
  SmokeFlags smoke;  // shared with smoke and nightly (cli/smoke_flags.h)
};

// The GPU smoke part's options (verify/verify_smoke.h), from the flags. `kb`: the command's one KB
// for the throughput floors.
verify::VerifySmokeOptions smoke_options(const VerifyFlags& f, const matrix::KnowledgeBase& kb) {
  verify::VerifySmokeOptions o;
  f.smoke.fill(o.smoke, o.records);
  o.records.peaks = smoke::kb_peaks(kb);
  o.engine = &engine::local_engine();
  o.log = [](const std::string& line) { std::cerr << line << "\n"; };
  return o;
}

void emit(const VerifyFlags& f, const verify::Report& r) {
  if (f.json)
    std::cout << verify::report_json(r).dump(2) << "\n";
  else
    std::cout << verify::render_table(r);
  if (!f.junit.empty()) write_file_atomic(f.junit, verify::render_junit(r));
}

int run_verify(const VerifyFlags& f) {
  sign::Pkey pub = f.key.empty() ? nullptr : sign::load_public_key(f.key);
  // The KB (driver floors for the claims, throughput floors for the smoke) only when one of them runs:
  // a signature-only verify reads no KB file (16 of its 44 ms, bench/verify-scan.sh).
  sign::Policy policy = f.policy.policy();
  std::optional<matrix::KnowledgeBase> kb;
  if (policy.contents || !f.no_smoke) kb.emplace(matrix::KnowledgeBase::load_default());
  verify::Report report =
      verify::verify_image({.ref = f.ref,
                            .transport = f.registry.transport(),
                            .public_key = pub.get(),
                            .key_name = f.key,
                            .signature = !f.no_signature,
                            .smoke = !f.no_smoke,
                            .policy = policy,
                            .smoke_options = kb ? smoke_options(f, *kb) : verify::VerifySmokeOptions{},
                            .kb = policy.contents ? &*kb : nullptr});
  emit(f, report);
  return report.ok() ? 0 : 1;
}

Registration verify_registration{
    {"verify", "Verify an image: signature, labels/tag vs actual contents (streamed, not run), GPU smoke",
     [](CLI::App& sub) -> Action {
       auto f = std::make_shared<VerifyFlags>();
       sub.add_option("REF", f->ref, "docker://HOST/REPO:TAG|@sha256:…, oci:DIR:TAG or docker-daemon:NAME:TAG")
           ->required();
       sub.add_option("--key", f->key, "public key (PEM PUBLIC KEY) the signature must verify with");
       sub.add_flag("--no-smoke", f->no_smoke, "static checks only (no GPU smoke test)");
       f->smoke.add(sub, kSmokePart);
       sub.add_flag("--no-signature", f->no_signature, "skip the signature check");
       f->policy.add(sub);
       sub.add_flag("--json", f->json, "print the report as JSON");
       sub.add_option("--junit", f->junit, "also write a JUnit XML report to FILE");
       f->registry.add(sub);
       return [f] { return run_verify(*f); };
     }}};

}  // namespace
}  // namespace imgtool::cli
