// imgtool promote docker://HOST/REPO@sha256:… --tag TAG --key PUB [--to docker://HOST/REPO --sign-key K]:
// flags -> release::PromoteRequest -> release::promote (release/promote.h) -> one line.
#include <iostream>
#include <optional>

#include "cli/policy_flags.h"
#include "cli/sign_common.h"
#include "cli/subcommand.h"
#include "image/registry_repository.h"
#include "release/promote.h"
#include "sign/keys.h"

namespace imgtool::cli {
namespace {

struct PromoteFlags {
  std::string ref, tag, key, sign_key, passphrase_env, to;
  PolicyFlags policy;  // the one trust policy (cli/policy_flags.h), as verify, select, nightly promote
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
                              .sign_key = key.get(),
                              .policy = f.policy.policy(),
                              .kb = &kb};
  release::PromoteResult res = release::promote(from, to ? &*to : nullptr, req);
  print_result(from, to ? *to : from, f, r, res);
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
       sub.add_option("--sign-key", f->sign_key,
                      "also sign REGISTRY/REPO:TAG and attest its SBOM with this private key (a file, or env://VAR) "
                      "before moving");
       sub.add_option("--passphrase-env", f->passphrase_env, "environment variable holding --sign-key's passphrase");
       f->policy.add(sub);
       f->registry.add(sub);
       return [f] { return run_promote(*f); };
     }}};

}  // namespace
}  // namespace imgtool::cli
