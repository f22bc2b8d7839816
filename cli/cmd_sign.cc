// imgtool sign docker://HOST/REPO:TAG|@sha256:… --key K: cosign-format signature
// stored as sha256-<hex>.sig beside the image.
#include <iostream>

#include "cli/sign_common.h"
#include "cli/subcommand.h"
#include "image/docker_transport.h"
#include "image/platform.h"
#include "image/registry_repository.h"
#include "sbom/publish.h"
#include "sign/keys.h"
#include "sign/sign_image.h"

namespace imgtool::cli {
namespace {

struct SignFlags {
  std::string ref, key, passphrase_env, identity;
  std::vector<std::string> annotations;
  bool no_sbom = false;
  RegistryFlags registry;
};

std::map<std::string, std::string> parse_annotations(const std::vector<std::string>& kv) {
  std::map<std::string, std::string> out;
  for (const auto& a : kv) {
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("--annotation: expected KEY=VALUE, found '" + a + "'");
    out[a.substr(0, eq)] = a.substr(eq + 1);
  }
  return out;
}

int run_sign(const SignFlags& f) {
  image::Reference r = docker_reference(f.ref, "sign");
  sign::Pkey key = sign::load_signing_key(f.key, f.passphrase_env);
  auto reg_ptr = f.registry.registry(r.host);
  image::Registry& reg = *reg_ptr;
  image::RegistryRepository repo(reg, r.name);
  // One GET: the digest signed is the digest of the bytes read, never a separate HEAD's answer.
  image::Manifest m = image::resolve_manifest(repo, r.digest.empty() ? r.tag : r.digest);
  std::string digest = m.digest();
  // Identity: REGISTRY/REPO:TAG (cosign and containers/image both accept it);
  // for a digest reference without --identity, REGISTRY/REPO.
  std::string identity = !f.identity.empty() ? f.identity : repo.name() + (r.tag.empty() ? "" : ":" + r.tag);
  sign::SignResult s = sign::sign_digest(repo, *key, {digest, identity, parse_annotations(f.annotations)});
  std::cout << (s.already_signed ? "already signed " : "signed ") << repo.name() << "@" << digest << " as " << identity
            << " -> " << s.signature_tag << " (" << s.layers << " signature(s))\n";
  if (!f.no_sbom) {  // the SBOM of the image (an index: of its linux/amd64 image, the one verify reads), same key
    std::string image_digest = image::platform_digest(m, f.ref);
    image::DockerSource src(reg_ptr, r.name, image_digest);
    image::Manifest im = image_digest == digest ? m : src.manifest();
    sign::AttestResult a = sbom::attest_sbom(repo, src, im, *key);
    std::cout << (a.already_attested ? "already attested " : "attested ") << "SPDX SBOM"
              << (image_digest == digest ? "" : " of the linux/amd64 image " + image_digest) << " -> "
              << a.attestation_tag << "\n";
  }
  return 0;
}

Registration sign_registration{
    {"sign", "Sign an image in a registry (cosign format: sha256-<hex>.sig, ECDSA P-256)", [](CLI::App& sub) -> Action {
       auto f = std::make_shared<SignFlags>();
       sub.add_option("REF", f->ref, "docker://HOST/REPO:TAG or docker://HOST/REPO@sha256:<hex>")->required();
       sub.add_option("--key", f->key,
                      "private key: a PEM PKCS#8 file (mode 0600) or env://VAR (the PEM text in VAR, removed from the "
                      "environment once read)")
           ->required();
       sub.add_option("--passphrase-env", f->passphrase_env, "environment variable holding the key's passphrase");
       sub.add_option("--identity", f->identity, "docker-reference to sign (default REGISTRY/REPO:TAG)");
       sub.add_option("--annotation", f->annotations, "KEY=VALUE added to the signed payload (repeatable)");
       sub.add_flag("--no-sbom", f->no_sbom, "do not attach the SPDX SBOM attestation (sha256-<hex>.att)");
       f->registry.add(sub);
       return [f] { return run_sign(*f); };
     }}};

}  // namespace
}  // namespace imgtool::cli
