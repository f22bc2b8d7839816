// imgtool promote docker://HOST/REPO@sha256:… --tag TAG --key PUB: moves TAG
// onto the digest only if it is signed by the key (for this repository) and,
// unless --no-verify-contents, its labels/tag claims match its contents.
#include <iostream>

#include "cli/sign_common.h"
#include "cli/subcommand.h"
#include "image/copy.h"
#include "image/docker_transport.h"
#include "image/platform.h"
#include "image/transport.h"
#include "sign/keys.h"
#include "sign/promote.h"
#include "sign/registry_repository.h"
#include "verify/report_render.h"
#include "sign/attestation.h"
#include "verify/release_gate.h"

namespace imgtool::cli {
namespace {

struct PromoteFlags {
  std::string ref, tag, key, identity, sign_key, passphrase_env, to;
  bool no_verify_contents = false, no_sbom = false;
  RegistryFlags registry;
};

// The release gate (verify/release_gate.h, the nightly runs the same) as a
// promotion gate: claims read against the NEW tag. An index is checked through
// its linux/amd64 image.
sign::PromoteGate contents_gate(const image::Reference& r, const image::TransportOptions& t, const std::string& tag) {
  return [r, t, tag, kb = matrix::KnowledgeBase::load_default()](const image::Manifest& m) {
    auto src = image::open_source("docker://" + r.host + "/" + r.name + "@" + image::platform_digest(m, r.text), t);
    verify::GateResult g = verify::release_gate({.ref = r.text, .source = src.get(), .tag = tag, .kb = &kb});
    if (!g.passed())
      throw CheckFailed("promote: expected the image's claims to match its contents, found failures (tag not moved):\n" +
                        verify::render_table(g.report) + "pass --no-verify-contents to promote anyway");
  };
}

// --to: from the staging repository into the release repository, by digest (blobs mounted when
// both are on one registry), attested and signed there, the tag moved last (sign::promote_across).
// The release repository of --to, refused (InputError) before anything is read or copied.
image::Reference release_repository(const PromoteFlags& f) {
  image::Reference t = docker_reference(f.to, "promote --to");
  bool bare = f.to.rfind(':') < f.to.rfind('/') || f.to.rfind(':') == f.to.find("://");  // no :TAG after the last '/'
  if (!bare || !t.digest.empty())
    throw InputError("promote --to: expected docker://HOST/REPO (no tag or digest: the tag is --tag), found '" + f.to + "'");
  if (f.sign_key.empty())
    throw InputError("promote --to: expected --sign-key KEY: the digest is signed for the release repository before its tag moves");
  return t;
}

int run_promote_across(const PromoteFlags& f, const image::Reference& r, const image::Reference& t, EVP_PKEY& pub) {
  sign::Pkey key = sign::load_signing_key(f.sign_key, f.passphrase_env);
  auto from_reg = std::make_shared<image::Registry>(r.host, f.registry.options());
  auto to_reg = t.host == r.host ? from_reg : std::make_shared<image::Registry>(t.host, f.registry.options());
  sign::RegistryRepository from(*from_reg, r.name), to(*to_reg, t.name);
  sign::CrossPromoteRequest req{.digest = r.digest, .tag = f.tag, .identity = f.identity};
  if (!f.no_verify_contents) req.gate = contents_gate(r, f.registry.transport(), f.tag);
  if (!f.no_sbom) req.require_attestation = sign::kSpdxPredicateType;
  image::CopyResult copied;
  req.copy_by_digest = [&] {
    image::DockerSource src(from_reg, r.name, r.digest);
    image::DockerDestination dst(to_reg, t.name);
    copied = image::copy_image(src, dst, "");
  };
  sign::PromoteResult res = sign::promote_across(from, to, pub, *key, req);
  std::cout << "copied by digest: " << copied.blobs_skipped << " of " << copied.blobs
            << " blob(s) mounted or already there, " << copied.bytes_copied << " byte(s) uploaded\n";
  std::cout << "promoted " << from.name() << "@" << r.digest << " -> " << to.name() << ":" << f.tag
            << (res.previous_digest.empty() ? " (new tag)" : " (was " + res.previous_digest + ")") << "; "
            << res.signature.summary() << "\n";
  return 0;
}

// `verify REPO:TAG` and `select` want a signature for exactly REPO:TAG (sign::required_identity);
// a digest signed for another tag (or by digest) moved under TAG verifies only with
// --any-tag-of-repository. Said once, with the fix, rather than found out at verify time.
void note_unless_exact(sign::Repository& repo, const std::string& digest, EVP_PKEY& pub, const std::string& tag) {
  std::string exact = sign::required_identity(repo.name(), tag, false);
  if (sign::check_signature(repo, digest, pub, exact).ok) return;
  std::cerr << "promote: note: " << digest << " has no signature by the key for exactly " << exact
            << ", so `imgtool verify docker://" << exact << "` fails unless --any-tag-of-repository; "
            << "fix: promote again with --sign-key KEY (signs " << exact << ")\n";
}

int run_promote(const PromoteFlags& f) {
  image::Reference r = docker_reference(f.ref, "promote");
  if (r.digest.empty()) throw InputError("promote: expected a reference by digest (…@sha256:<hex>), found '" + f.ref + "'");
  if (!f.to.empty()) {
    image::Reference t = release_repository(f);
    return run_promote_across(f, r, t, *sign::load_public_key(f.key));
  }
  sign::Pkey pub = sign::load_public_key(f.key);
  sign::Pkey resign = f.sign_key.empty() ? nullptr : sign::load_signing_key(f.sign_key, f.passphrase_env);
  image::Registry reg(r.host, f.registry.options());
  sign::RegistryRepository repo(reg, r.name);
  sign::PromoteRequest req{r.digest, f.tag, f.identity, nullptr, resign.get()};
  if (!f.no_verify_contents) req.gate = contents_gate(r, f.registry.transport(), f.tag);
  if (!f.no_sbom) req.require_attestation = sign::kSpdxPredicateType;  // no tag without its SBOM
  sign::PromoteResult res = sign::promote(repo, *pub, req);
  std::cout << "promoted " << repo.name() << ":" << f.tag << " -> " << r.digest
            << (res.previous_digest.empty() ? " (new tag)" : " (was " + res.previous_digest + ")") << "; "
            << res.signature.summary() << "\n";
  if (!resign) note_unless_exact(repo, r.digest, *pub, f.tag);
  return 0;
}

Registration promote_registration{{"promote", "Move a tag onto a digest only if that digest is signed by the key (and its contents match its claims)",
                  [](CLI::App& sub) -> Action {
                    auto f = std::make_shared<PromoteFlags>();
                    sub.add_option("REF", f->ref, "docker://HOST/REPO@sha256:<hex>")->required();
                    sub.add_option("--tag", f->tag, "the tag to move")->required();
                    sub.add_option("--to", f->to, "docker://HOST/REPO: promote into this (release) repository — copied "
                                                  "by digest (blobs mounted on one registry), attested and signed there "
                                                  "with --sign-key, then tagged");
                    sub.add_option("--key", f->key, "public key the digest must be signed with")->required();
                    sub.add_option("--identity", f->identity, "required signed docker-reference (default: REGISTRY/REPO, any tag or digest)");
                    sub.add_option("--sign-key", f->sign_key, "also sign REGISTRY/REPO:TAG with this private key (a file, or env://VAR) before moving");
                    sub.add_option("--passphrase-env", f->passphrase_env, "environment variable holding --sign-key's passphrase");
                    sub.add_flag("--no-verify-contents", f->no_verify_contents, "skip the claims vs contents gate");
                    sub.add_flag("--no-sbom", f->no_sbom, "do not require the signed SPDX SBOM attestation (sha256-<hex>.att)");
                    f->registry.add(sub);
                    return [f] { return run_promote(*f); };
                  }}};

}  // namespace
}  // namespace imgtool::cli
