// imgtool sbom REF [--out F] [--key PUB] [--created T]: the SPDX 2.3 SBOM of an image.
//   docker://…       the attested one (sha256-<hex>.att of the manifest digest read once),
//                    verified with --key when given (exit 1 if it does not verify);
//   docker-daemon:…, oci:…   built on the fly from the layers (one streaming pass).
#include <iostream>

#include "cli/sign_common.h"
#include "cli/subcommand.h"
#include "core/fs.h"
#include "image/platform.h"
#include "image/registry_repository.h"
#include "sbom/publish.h"
#include "sign/attestation.h"
#include "sign/keys.h"

namespace imgtool::cli {
namespace {

struct SbomFlags {
  std::string ref, out, key, created;
  RegistryFlags registry;
};

// The attested SBOM of a registry image (verified with --key when given).
nlohmann::ordered_json attested(const SbomFlags& f, const image::Reference& r) {
  auto repo_ptr = f.registry.repository(r);
  image::RegistryRepository& repo = *repo_ptr;
  image::Manifest m = image::resolve_manifest(repo, r.digest.empty() ? r.tag : r.digest);
  if (image::is_index(m)) m = image::resolve_manifest(repo, image::platform_digest(m, f.ref));
  if (f.key.empty()) {
    auto st = sign::read_attestation_unverified(repo, m.digest(), sign::kSpdxPredicateType);
    if (!st)
      throw CheckFailed(repo.name() + "@" + m.digest() + ": expected an SPDX attestation (" +
                        sign::attestation_tag(m.digest()) +
                        "), found none; publish with imgtool nightly or imgtool sign");
    std::cerr << "sbom: NOT verified (no --key): the attestation's signature was not checked\n";
    return st->predicate;
  }
  sign::Pkey pub = sign::load_public_key(f.key);
  auto c = sign::check_attestation(repo, m.digest(), *pub, sign::kSpdxPredicateType);
  if (!c.ok)
    throw CheckFailed(repo.name() + "@" + m.digest() + ": expected a valid SPDX attestation, found " + c.summary());
  return c.statement.predicate;
}

// Built now from the image's layers (docker-daemon: names it by image ID, oci: by manifest digest).
nlohmann::ordered_json on_the_fly(const SbomFlags& f, const image::Reference& r) {
  auto src = image::open_platform_source(r, f.registry.transport());
  image::Manifest m = src->manifest();
  std::string digest = r.transport == image::Transport::docker_daemon ? m.config().digest : m.digest();
  return sbom::sbom_of(*src, m, r.name, digest, {.created = f.created}).to_json();
}

int run_sbom(const SbomFlags& f) {
  image::Reference r = image::parse_reference(f.ref);
  if (!f.created.empty()) sbom::spdx_time(f.created, "--created");  // bad input before any work
  if (!f.key.empty() && r.transport != image::Transport::docker)
    throw InputError("--key: only for docker:// references (attested SBOMs), found '" + f.ref + "'");
  std::string text = (r.transport == image::Transport::docker ? attested(f, r) : on_the_fly(f, r)).dump(2) + "\n";
  if (f.out.empty())
    std::cout << text;
  else
    write_file_atomic(f.out, text);
  return 0;
}

Registration sbom_registration{
    {"sbom", "Print or write an image's SPDX 2.3 SBOM (registry: the attested one; local: built now)",
     [](CLI::App& sub) -> Action {
       auto f = std::make_shared<SbomFlags>();
       sub.add_option("REF", f->ref, "docker://HOST/REPO:TAG|@sha256:…, docker-daemon:NAME:TAG or oci:DIR:TAG")
           ->required();
       sub.add_option("--out", f->out, "write the SBOM to this file (default: stdout)");
       sub.add_option("--key", f->key, "public key the attestation must verify with (docker:// only)");
       sub.add_option("--created", f->created, "creation time for an SBOM built now (default: the image's build time)");
       f->registry.add(sub);
       return [f] { return run_sbom(*f); };
     }}};

}  // namespace
}  // namespace imgtool::cli
