// imgtool promote docker://HOST/REPO@sha256:… --tag TAG --key PUB [--to docker://HOST/REPO --sign-key K]:
// flags -> release::PromoteRequest -> release::promote (release/promote.h) -> one line.
#include <iostream>
#include <optional>

#include "cli/sign_common.h"
#include "cli/subcommand.h"
#include "image/registry_repository.h"
#include "release/promote.h"
#include "sign/keys.h"

namespace imgtool::cli {
namespace {

struct PromoteFlags {
  std::string ref, tag, key, identity, sign_key, passphrase_env, to;
  bool no_verify_contents = false, no_sbom = false, allow_without_gpu_smoke = false;
  std::vector<std::string> require_gpu;
  RegistryFlags registry;
};

// --to: the release repository (docker://HOST/REPO, no tag or digest: the tag is --tag), refused
// (InputError) before anything is read or copied.
std::optional<image::Reference> release_repository(const PromoteFlags& f) {
  if (f.to.empty()) return std::nullopt;
  image::Reference t = docker_reference(f.to, "promote --to");
  if (!t.is_repository())
    throw InputError("promote --to: expected docker://HOST/REPO (no tag or digest: the tag is --tag), found '" + f.to +
                     "'");
  if (f.sign_key.empty())
    throw InputError(
        "promote --to: expected --sign-key KEY: the digest is signed for the release repository before its tag moves");
  return t;
}

void print_result(const image::Repository& from, const image::Repository& to, const PromoteFlags& f,
                  const image::Reference& r, const release::PromoteResult& res) {
  if (&from != &to)
    std::cout << "copied by digest: " << res.copied.blobs_skipped << " of " << res.copied.blobs
              << " blob(s) mounted or already there, " << res.copied.bytes_copied << " byte(s) uploaded\n";
  std::cout << "promoted " << from.name() << "@" << r.digest << " -> " << to.name() << ":" << f.tag
            << (res.previous_digest.empty() ? " (new tag)" : " (was " + res.previous_digest + ")") << "; "
            << res.signature.summary() << (res.resigned ? "; signed and attested with --sign-key" : "") << "\n";
  if (!res.evidence.empty()) std::cout << "smoke: " << res.evidence << "\n";
}

// `verify REPO:TAG` and `select` want a signature for exactly REPO:TAG (sign::required_identity);
// a digest signed for another tag (or by digest) moved under TAG verifies only with
// --any-tag-of-repository. Said once, with the fix, rather than found out at verify time.
void note_unless_exact(image::Repository& repo, const std::string& digest, EVP_PKEY& pub, const std::string& tag) {
  std::string exact = sign::required_identity(repo.name(), tag, false);
  if (sign::check_signature(repo, digest, pub, exact).ok) return;
  std::cerr << "promote: note: " << digest << " has no signature by the key for exactly " << exact
            << ", so `imgtool verify docker://" << exact << "` fails unless --any-tag-of-repository; "
            << "fix: promote again with --sign-key KEY (signs " << exact << ")\n";
}

int run_promote(const PromoteFlags& f) {
  image::Reference r = docker_reference(f.ref, "promote");
  if (r.digest.empty())
    throw InputError("promote: expected a reference by digest (…@sha256:<hex>), found '" + f.ref + "'");
  auto t = release_repository(f);
  sign::Pkey pub = sign::load_public_key(f.key);
  sign::Pkey key = f.sign_key.empty() ? nullptr : sign::load_signing_key(f.sign_key, f.passphrase_env);
  auto kb = matrix::KnowledgeBase::load_default();
  auto from_reg = f.registry.registry(r.host);
  auto to_reg = t ? f.registry.registry(t->host) : from_reg;  // one client per host (the command's session)
  image::RegistryRepository from(from_reg, r.name);
  std::optional<image::RegistryRepository> to;
  if (t) to.emplace(to_reg, t->name);
  release::PromoteRequest req{.digest = r.digest,
                              .tag = f.tag,
                              .public_key = pub.get(),
                              .identity = f.identity,
                              .sign_key = key.get(),
                              .verify_contents = !f.no_verify_contents,
                              .require_sbom = !f.no_sbom,
                              .allow_without_gpu_smoke = f.allow_without_gpu_smoke,
                              .require_gpu = f.require_gpu,
                              .kb = &kb};
  release::PromoteResult res = release::promote(from, to ? &*to : nullptr, req);
  print_result(from, to ? *to : from, f, r, res);
  if (!key && !t) note_unless_exact(from, r.digest, *pub, f.tag);
  return 0;
}

Registration promote_registration{
    {"promote", "Move a tag onto a digest only if that digest is signed by the key (and its contents match its claims)",
     [](CLI::App& sub) -> Action {
       auto f = std::make_shared<PromoteFlags>();
       sub.add_option("REF", f->ref, "docker://HOST/REPO@sha256:<hex>")->required();
       sub.add_option("--tag", f->tag, "the tag to move")->required();
       sub.add_option("--to", f->to,
                      "docker://HOST/REPO: promote into this (release) repository — copied "
                      "by digest (blobs mounted on one registry), attested and signed there "
                      "with --sign-key, then tagged");
       sub.add_option("--key", f->key, "public key the digest must be signed with")->required();
       sub.add_option("--identity", f->identity,
                      "required signed docker-reference (default: REGISTRY/REPO, any tag or digest)");
       sub.add_option("--sign-key", f->sign_key,
                      "also sign REGISTRY/REPO:TAG and attest its SBOM with this private key (a file, or env://VAR) "
                      "before moving");
       sub.add_option("--passphrase-env", f->passphrase_env, "environment variable holding --sign-key's passphrase");
       sub.add_flag("--no-verify-contents", f->no_verify_contents, "skip the claims vs contents gate");
       sub.add_flag("--no-sbom", f->no_sbom, "do not require the signed SPDX SBOM attestation (sha256-<hex>.att)");
       sub.add_flag("--allow-without-gpu-smoke", f->allow_without_gpu_smoke,
                    "promote a gpu image without hardware evidence (a signed smoke attestation from a real "
                    "GPU); needs --sign-key: the override is recorded on the signature and verify shows it");
       sub.add_option("--require-gpu", f->require_gpu,
                      "compute capabilities (sm_80,sm_90) each needing its own bound hardware pass: the newest "
                      "smoke attestation from a device of each must be one")
           ->delimiter(',');
       f->registry.add(sub);
       return [f] { return run_promote(*f); };
     }}};

}  // namespace
}  // namespace imgtool::cli
