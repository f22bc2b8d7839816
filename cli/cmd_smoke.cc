// imgtool smoke IMAGE: run the GPU smoke probe inside an image and judge it.
#include <iostream>
#include <memory>
#include <optional>

#include "cli/sign_common.h"
#include "cli/smoke_flags.h"
#include "cli/subcommand.h"
#include "core/strings.h"
#include "engine/engine.h"
#include "image/registry_repository.h"
#include "matrix/kb.h"
#include "release/evidence.h"
#include "sign/keys.h"
#include "smoke/evidence.h"
#include "smoke/records_judge.h"
#include "smoke/smoke_judge.h"
#include "smoke/smoke_report.h"
#include "smoke/smoke_runner.h"

namespace imgtool::cli {
namespace {

struct SmokeCmdFlags {
  smoke::SmokeOptions opt;  // the image and its expectations; the rest from `smoke`
  SmokeFlags smoke;         // shared with verify and nightly (cli/smoke_flags.h)
  bool json = false;
  std::string attest, key, passphrase_env;  // --attest docker://HOST/REPO@sha256:… --key K: the evidence, signed
  RegistryFlags registry;
};

// --attest: the smoke's evidence, signed, for the digest it names (release/evidence.h: only when that
// digest's config is the image just smoked). Checked before the smoke runs: a bad flag wastes no run.
void check_attest_flags(const SmokeCmdFlags& f) {
  if (f.attest.empty()) return;
  image::Reference r = docker_reference(f.attest, "smoke --attest");
  if (r.digest.empty())
    throw InputError("smoke --attest: expected docker://HOST/REPO@sha256:<hex>, found '" + f.attest + "'");
  if (f.key.empty())
    throw InputError("smoke --attest: expected --key KEY (the private key the evidence is signed with), found none");
}

// Only a document about the image just smoked (smoke/binding.h) is attested; the key was loaded
// (and an env:// variable removed) before docker or any credential helper started.
void attest(const SmokeCmdFlags& f, const smoke::SmokeResult& res, EVP_PKEY& key) {
  if (!res.binding.empty())
    throw CheckFailed("smoke --attest: refusing to attest: the probe's document contradicts the image " + res.image.id +
                      ":\n  " + strings::join(res.binding, "\n  "));
  image::Reference r = docker_reference(f.attest, "smoke --attest");
  auto repo = f.registry.repository(r);
  smoke::SmokeEvidence e = smoke::evidence_of_result(res, strings::join(f.smoke.profiles, ","));
  auto a = release::attest_evidence(*repo, key, r.digest, res.image.id, e);
  std::cerr << "attested the smoke evidence (" << e.summary() << ") -> " << a.attestation_tag << "\n";
}

int run_smoke_cmd(SmokeCmdFlags& f) {
  smoke::RecordOptions records;
  f.smoke.fill(f.opt, records);
  check_attest_flags(f);
  std::optional<matrix::KnowledgeBase> kb;  // the throughput floors, when the run is recorded and judged
  if (records.record) records.peaks = smoke::kb_peaks(kb.emplace(matrix::KnowledgeBase::load_default()));
  sign::Pkey key = f.attest.empty() ? nullptr : sign::load_signing_key(f.key, f.passphrase_env);
  auto [res, throughput] = smoke::smoke_and_judge(f.opt, records, engine::local_engine());
  if (key && res.probe.is_object()) attest(f, res, *key);
  if (f.json) {
    auto j = res.to_json();
    j["throughput"] = nlohmann::json::array();
    for (auto& t : throughput) j["throughput"].push_back(t.to_json());
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << smoke::smoke_text(res, throughput);
  }
  return res.passed() ? 0 : 1;
}

Registration smoke_registration(
    {"smoke", "Run the GPU smoke probe inside an image (docker run, probe mounted read-only) and judge it",
     [](CLI::App& sub) -> Action {
       auto f = std::make_shared<SmokeCmdFlags>();
       sub.add_option("image", f->opt.image, "image reference (local)")->required();
       f->smoke.add(sub, kSmokeCommand);
       sub.add_option("--expect-variant", f->opt.expect_variant, "gpu|cpu; default: the io.imgtool.variant label")
           ->check(CLI::IsMember({"gpu", "cpu"}));
       sub.add_option("--expect-cuda", f->opt.expect_cuda, "CUDA the image claims; default: io.imgtool.cuda");
       sub.add_option("--python", f->opt.python, "the image's python (default python3 on the image's PATH)");
       sub.add_flag("--json", f->json, "print the full result as JSON");
       sub.add_option("--attest", f->attest,
                      "docker://HOST/REPO@sha256:…: attest how the image was smoked "
                      "(hardware, test-double or none; devices, argv, metrics) for that digest, whose config "
                      "must be the smoked image's ID");
       sub.add_option("--key", f->key, "private key for --attest (a file, or env://VAR)");
       sub.add_option("--passphrase-env", f->passphrase_env, "env var holding --key's passphrase");
       f->registry.add(sub);
       return [f] { return run_smoke_cmd(*f); };
     }});

}  // namespace
}  // namespace imgtool::cli
