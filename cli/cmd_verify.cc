// imgtool verify REF --key PUB [--no-smoke] [--json] [--junit FILE]:
// signature + claims vs contents (layers streamed, nothing run), then the
// GPU smoke part (verify/verify_smoke.h): the image is made local (reused by
// ID or loaded by digest under a temporary name), the probe runs, throughput is
// recorded and judged, and the rows join the same report.
#include <fstream>
#include <iostream>
#include <optional>

#include "cli/sign_common.h"
#include "cli/subcommand.h"
#include "core/fs.h"
#include "image/platform.h"
#include "sign/keys.h"
#include "sign/registry_repository.h"
#include "verify/report_render.h"
#include "verify/sbom_check.h"
#include "verify/static_checks.h"
#include "run/render.h"
#include "verify/verify_smoke.h"

namespace imgtool::cli {
namespace {

struct VerifyFlags {
  std::string ref, key, identity, junit;
  bool no_smoke = false, json = false, no_signature = false, no_claims = false, no_sbom = false;
  bool any_tag = false;  // --any-tag-of-repository
  RegistryFlags registry;
  verify::VerifySmokeOptions smoke;
  std::vector<std::string> profiles, sets;  // run profile (imgtool run-config) for the smoke part
  int smoke_timeout_s = 900;
  int reps = 0;
  bool no_record = false;
};

// The GPU smoke part (verify/verify_smoke.h); the flags only fill its options.
verify::SmokeHook smoke_hook(const VerifyFlags& f) {
  verify::VerifySmokeOptions o = f.smoke;
  o.timeout = std::chrono::seconds(f.smoke_timeout_s);
  if (!f.profiles.empty() || !f.sets.empty()) {  // what was smoked is what is run
    auto s = runconf::smoke_settings(runconf::load_profile({f.profiles.empty() ? std::vector<std::string>{"base"} : f.profiles, f.sets, {}}));
    if (o.gpus == "auto" && !s.gpus.empty()) o.gpus = s.gpus;
    if (o.shm_size.empty()) o.shm_size = s.shm_size;
    o.run_flags = s.flags;
    o.probe_args.insert(o.probe_args.end(), s.probe_args.begin(), s.probe_args.end());
  }
  if (f.reps > 0) o.probe_args.insert(o.probe_args.end(), {"--reps", std::to_string(f.reps)});
  o.record = !f.no_record;
  o.transport = f.registry.transport();
  o.log = [](const std::string& line) { std::cerr << line << "\n"; };
  return verify::make_smoke_hook(std::move(o));
}

void emit(const VerifyFlags& f, const verify::Report& r) {
  if (f.json)
    std::cout << verify::report_json(r).dump(2) << "\n";
  else
    std::cout << verify::render_table(r);
  if (!f.junit.empty()) write_file_atomic(f.junit, verify::render_junit(r));
}

int run_verify(const VerifyFlags& f) {
  image::Reference r = image::parse_reference(f.ref);
  sign::Pkey pub = f.key.empty() ? nullptr : sign::load_public_key(f.key);
  if (!f.no_signature && !pub) throw InputError("verify: expected --key PUBLIC_KEY (or --no-signature), found none");
  std::string index_digest;  // an index: its linux/amd64 image, as promote; the index's signature holds too
  auto source = image::open_platform_source(r, f.registry.transport(), {}, &index_digest);
  std::unique_ptr<image::Registry> reg;
  std::unique_ptr<sign::RegistryRepository> repo;
  verify::StaticInputs in{f.ref, source.get(), nullptr, "", r.tag, index_digest};
  if (r.transport == "docker") {
    reg = std::make_unique<image::Registry>(r.host, f.registry.options());
    repo = std::make_unique<sign::RegistryRepository>(*reg, r.name);
    in.signatures = repo.get();  // the signature is checked on the digest of the manifest verify reads
  }
  std::optional<matrix::KnowledgeBase> kb;
  if (!f.no_claims) kb = matrix::KnowledgeBase::load_default();  // driver floors for the claims
  verify::VerifyOptions opt{pub.get(), f.key, f.identity, !f.no_signature, !f.no_claims, nullptr, kb ? &*kb : nullptr};
  opt.any_tag_of_repository = f.any_tag;
  if (!f.no_smoke) opt.smoke = smoke_hook(f);
  // Registry images: the SPDX attestation of the same digest (one read above), vs the layers,
  // whose inventory the claims scan gathers on the way (the layers are decoded once).
  bool sbom_rows = repo && pub && !f.no_signature && !f.no_sbom;
  std::optional<sbom::Inventory> inventory;
  if (sbom_rows) {
    opt.keep_also = sbom::keep_for_inventory;
    opt.on_contents = [&inventory](const verify::ContentsTree& tree) { inventory = sbom::gather_inventory(tree); };
  }
  verify::Report report = verify::verify_static(in, opt);
  if (sbom_rows && !report.digest.empty())
    verify::add_sbom_rows(report, *repo, *source, sign::resolve_manifest(*repo, report.digest), *pub, f.key,
                          inventory ? &*inventory : nullptr);
  emit(f, report);
  return report.ok() ? 0 : 1;
}

Registration verify_registration{{"verify", "Verify an image: signature, labels/tag vs actual contents (streamed, not run), GPU smoke",
                  [](CLI::App& sub) -> Action {
                    auto f = std::make_shared<VerifyFlags>();
                    sub.add_option("REF", f->ref, "docker://HOST/REPO:TAG|@sha256:…, oci:DIR:TAG or docker-daemon:NAME:TAG")
                        ->required();
                    sub.add_option("--key", f->key, "public key (PEM PUBLIC KEY) the signature must verify with");
                    auto* identity = sub.add_option("--identity", f->identity,
                                   "required signed docker-reference (default: exactly REGISTRY/REPO:TAG for a tag, "
                                   "REGISTRY/REPO for a digest)");
                    sub.add_flag("--any-tag-of-repository", f->any_tag,
                                 "accept a signature made for any tag of the repository (default: the exact tag)")
                        ->excludes(identity);
                    sub.add_flag("--no-smoke", f->no_smoke, "static checks only (no GPU smoke test)");
                    sub.add_option("--gpus", f->smoke.gpus,
                                   "smoke: docker run --gpus value; auto = all for gpu-variant images, none for cpu")
                        ->default_val("auto");
                    sub.add_option("--shm-size", f->smoke.shm_size, "smoke: docker run --shm-size (e.g. 2g)");
                    sub.add_option("--profile", f->profiles, "smoke: run profile layer(s) as for run-config (shm, ulimits, user, env, limits)");
                    sub.add_option("--set", f->sets, "smoke: run profile key=value, applied last");
                    sub.add_option("--smoke-timeout", f->smoke_timeout_s, "smoke: seconds for the probe's docker run (900)");
                    sub.add_option("--reps", f->reps, "smoke: timed repetitions per benchmark (default: the probe's)");
                    sub.add_option("--records", f->smoke.records,
                                   "smoke: throughput records SQLite file (default $IMGTOOL_RECORDS or <cache>/records.db)");
                    sub.add_flag("--no-record", f->no_record, "smoke: do not store or judge throughput");
                    sub.add_flag("--no-signature", f->no_signature, "skip the signature check");
                    sub.add_flag("--no-claims", f->no_claims, "skip the claims vs contents check");
                    sub.add_flag("--no-sbom", f->no_sbom,
                                 "skip the SBOM check (registry images: the signed SPDX attestation vs the layers)");
                    sub.add_flag("--json", f->json, "print the report as JSON");
                    sub.add_option("--junit", f->junit, "also write a JUnit XML report to FILE");
                    f->registry.add(sub);
                    return [f] { return run_verify(*f); };
                  }}};

}  // namespace
}  // namespace imgtool::cli
