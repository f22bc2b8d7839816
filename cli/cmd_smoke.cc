// imgtool smoke IMAGE: run the GPU smoke probe inside an image and judge it.
#include <iostream>
#include <memory>

#include "cli/sign_common.h"
#include "cli/subcommand.h"
#include "core/strings.h"
#include "image/registry_repository.h"
#include "release/evidence.h"
#include "sign/keys.h"
#include "smoke/evidence.h"
#include "run/render.h"
#include "smoke/smoke_judge.h"
#include "smoke/smoke_report.h"
#include "smoke/smoke_runner.h"

namespace imgtool::cli {
namespace {

struct SmokeFlags {
  smoke::SmokeOptions opt;
  bool json = false;
  bool no_record = false, no_gpu_host = false;
  std::string gpu_host;
  int timeout_s = 900;
  int reps = 0;
  std::string records;
  std::vector<std::string> profiles, sets;  // run profile layers (imgtool run-config): what is smoked is what is run
  std::string attest, key, passphrase_env;  // --attest docker://HOST/REPO@sha256:… --key K: the evidence, signed
  RegistryFlags registry;
};

// --attest: the smoke's evidence, signed, for the digest it names (release/evidence.h: only when that
// digest's config is the image just smoked). Checked before the smoke runs: a bad flag wastes no run.
void check_attest_flags(const SmokeFlags& f) {
  if (f.attest.empty()) return;
  image::Reference r = docker_reference(f.attest, "smoke --attest");
  if (r.digest.empty()) throw InputError("smoke --attest: expected docker://HOST/REPO@sha256:<hex>, found '" + f.attest + "'");
  if (f.key.empty()) throw InputError("smoke --attest: expected --key KEY (the private key the evidence is signed with), found none");
}

void attest(const SmokeFlags& f, const smoke::SmokeResult& res) {
  image::Reference r = docker_reference(f.attest, "smoke --attest");
  sign::Pkey key = sign::load_signing_key(f.key, f.passphrase_env);
  image::RegistryRepository repo(std::make_shared<image::Registry>(r.host, f.registry.options()), r.name);
  smoke::SmokeEvidence e = smoke::evidence_from_result(res.to_json(), strings::join(f.profiles, ","));
  auto a = release::attest_evidence(repo, *key, r.digest, res.image.id, e);
  std::cerr << "attested the smoke evidence (" << e.summary() << ") -> " << a.attestation_tag << "\n";
}

// A run profile sets GPUs and /dev/shm (unless given as flags), the other run
// settings, and the probe's expectations for them.
void apply_profile(SmokeFlags& f, bool gpus_given, bool shm_given) {
  if (f.profiles.empty() && f.sets.empty()) return;
  auto s = runconf::smoke_settings(runconf::load_profile({f.profiles.empty() ? std::vector<std::string>{"base"} : f.profiles, f.sets, {}}));
  if (!gpus_given && !s.gpus.empty()) f.opt.gpus = s.gpus;
  if (!shm_given && !s.shm_size.empty()) f.opt.shm_size = s.shm_size;
  f.opt.run_flags = s.flags;
  f.opt.probe_args.insert(f.opt.probe_args.end(), s.probe_args.begin(), s.probe_args.end());
}

int run_smoke_cmd(SmokeFlags& f) {
  f.opt.timeout = std::chrono::seconds(f.timeout_s);
  f.opt.gpu_host = smoke::parse_gpu_host(f.gpu_host, f.no_gpu_host);
  if (f.reps > 0) f.opt.probe_args = {"--reps", std::to_string(f.reps)};
  apply_profile(f, f.opt.gpus != "none", !f.opt.shm_size.empty());
  check_attest_flags(f);
  auto [res, throughput] = smoke::smoke_and_judge(f.opt, {.record = !f.no_record, .records = f.records});
  if (!f.attest.empty() && res.probe.is_object()) attest(f, res);
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

Registration smoke_registration({"smoke", "Run the GPU smoke probe inside an image (docker run, probe mounted read-only) and judge it",
                  [](CLI::App& sub) -> Action {
                    auto f = std::make_shared<SmokeFlags>();
                    sub.add_option("image", f->opt.image, "image reference (local)")->required();
                    sub.add_option("--gpus", f->opt.gpus,
                                   "docker run --gpus value: auto (default: all for gpu images, none for cpu), all, "
                                   "device=0, …; none = no --gpus")
                        ->default_val("auto");
                    sub.add_flag("--no-gpu-host", f->no_gpu_host, "the same as --gpu-host none");
                    sub.add_option("--gpu-host", f->gpu_host,
                                   "what this host offers a gpu image: gpu (default: judged in full), none (judged up to "
                                   "the driver; the GPU part reported as not run), test-double (the imgtool driver "
                                   "double: cudart, cuBLAS and Paddle on the GPU reported as not judged)");
                    sub.add_option("--shm-size", f->opt.shm_size, "docker run --shm-size (e.g. 2g); default Docker's 64 MB");
                    sub.add_option("--expect-variant", f->opt.expect_variant,
                                   "gpu|cpu; default: the io.imgtool.variant label")
                        ->check(CLI::IsMember({"gpu", "cpu"}));
                    sub.add_option("--expect-cuda", f->opt.expect_cuda, "CUDA the image claims; default: io.imgtool.cuda");
                    sub.add_option("--python", f->opt.python, "the image's python (default python3 on the image's PATH)");
                    sub.add_option("--timeout", f->timeout_s, "seconds for the whole docker run (default 900)");
                    sub.add_option("--reps", f->reps, "timed repetitions per benchmark (default: the probe's, 20)");
                    sub.add_option("--records", f->records,
                                   "throughput records SQLite file (default $IMGTOOL_RECORDS or <cache>/records.db)");
                    sub.add_flag("--no-record", f->no_record, "do not store or judge throughput");
                    sub.add_flag("--json", f->json, "print the full result as JSON");
                    sub.add_option("--profile", f->profiles, "run profile layer(s) as for run-config: GPUs, shm, ulimits, user, env, limits");
                    sub.add_option("--set", f->sets, "run profile key=value, applied last");
                    sub.add_option("--attest", f->attest, "docker://HOST/REPO@sha256:…: attest how the image was smoked "
                                   "(hardware, test-double or none; devices, argv, metrics) for that digest, whose config "
                                   "must be the smoked image's ID");
                    sub.add_option("--key", f->key, "private key for --attest (a file, or env://VAR)");
                    sub.add_option("--passphrase-env", f->passphrase_env, "env var holding --key's passphrase");
                    f->registry.add(sub);
                    return [f] { return run_smoke_cmd(*f); };
                  }});

}  // namespace
}  // namespace imgtool::cli
