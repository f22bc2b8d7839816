// imgtool nightly M [M…] --registry HOST:PORT/NS --key K --report DIR [--shard i/n]
//   plan → generate → build → smoke → release gate → (passed only) push by digest → sign → move tag.
// imgtool nightly merge DIR… --report DIR   joins shard reports.
// imgtool nightly collect TAG.json… --from-report DIR --report OUT   folds GPU smoke results
//   from Kubernetes Jobs (imgtool plan --emit k8s) into a report and the records store.
#include <iostream>

#include "builder/cell_source.h"
#include "cli/kb_flag.h"
#include "cli/policy_flags.h"
#include "cli/progress_printer.h"
#include "cli/reproducible_flag.h"
#include "cli/sign_common.h"
#include "cli/smoke_flags.h"
#include "cli/subcommand.h"
#include "core/error.h"
#include "core/strings.h"
#include "engine/engine.h"
#include "nightly/nightly.h"
#include "nightly/nightly_collect.h"
#include "nightly/nightly_promote.h"
#include "nightly/nightly_run.h"
#include "nightly/nightly_steps_real.h"
#include "nightly/report.h"
#include "nightly/report_changes.h"
#include "sign/keys.h"
#include "smoke/records_judge.h"
#include "smoke/run_profile.h"

namespace imgtool::cli {
namespace {

namespace fs = std::filesystem;

namespace bt = imgtool::builder;

struct NightlyFlags {
  std::vector<std::string> inputs;
  std::string registry, key, report, shard = "1/1", state, passphrase_env, stage;
  RegistryFlags registry_flags;  // --ca-file, --insecure-http and the command's registry session
  SmokeFlags smoke;  // shared with smoke and verify (cli/smoke_flags.h); collect uses its --records/--no-record
  KbFlag kb;
  std::string kb_index;  // --kb-index URL (implies --kb-check)
  bool kb_check = false;
  std::vector<std::string> only, merge_dirs, collect_files;
  std::string from_report;
  std::string sign_key, public_key;  // nightly promote
  int jobs = 1, timeout = 3600, reproduce = 0;
  bool fresh_smoke = false, quiet = false, keep_stages = false;
  ReproducibleFlag reproducible;
  PolicyFlags policy;  // nightly promote: the one trust policy (cli/policy_flags.h)
};

// The report may be a shard's (merge, collect): its text is shown through strings::printable.
void print_summary(const nightly::NightlyReport& r, const fs::path& dir) {
  using strings::printable;
  std::cout << "nightly: " << (r.ok() ? "OK" : "FAILED") << " — " << r.cells.size() << " cell(s), " << r.docker_builds
            << " docker build(s), " << r.seconds << " s\n";
  for (auto& c : r.cells)
    std::cout << "  " << printable(c.tag) << ": build " << bt::to_string(c.build.status) << ", smoke "
              << nightly::to_string(c.smoke.status) << ", gate " << nightly::to_string(c.gate.status) << ", publish "
              << nightly::to_string(c.publish.status) << ' ' << printable(c.publish.digest) << "\n";
  std::cout << "kb: " << printable(r.kb.version) << ", released " << printable(r.kb.released) << ", " << r.kb.age_days
            << " day(s) old; check " << nightly::to_string(r.kb.check)
            << (r.kb.stale.empty() ? "" : ": " + std::to_string(r.kb.stale.size()) + " stale release(s)") << "\n";
  if (auto lines = r.without_hardware_evidence(); !lines.empty()) {
    std::cout << "warning: " << lines.size()
              << " GPU tag(s) published without hardware evidence (the GPU part never ran "
              << "on a real GPU; promote refuses them):\n";
    for (auto& l : lines) std::cout << "  " << l << "\n";
  }
  std::cout << "report: " << (dir / "report.html").string() << " (also report.md, nightly.json, junit.xml, logs/)\n";
}

std::string joined(const std::vector<std::string>& inputs) {
  std::string out;
  for (auto& i : inputs) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// The flags as a nightly::NightlyRequest (nightly/nightly_run.h); `kb` is the run's one KB (plan,
// gate, throughput floors, the report's KB section). Parsed before the aggregate: GCC 12 destroys
// the half-built aggregate's members twice when an initializer throws (a bad --shard crashed with
// SIGSEGV instead of exiting 2).
nightly::NightlyRequest nightly_request(const NightlyFlags& f, const matrix::KnowledgeBase& kb) {
  if (f.inputs.empty() || f.registry.empty() || f.key.empty() || f.report.empty())
    throw InputError(
        "nightly: expected MATRIX --registry HOST:PORT/NS --key KEY --report DIR; "
        "one of them is missing (see imgtool nightly --help)");
  fs::path state = f.state.empty() ? bt::default_state_dir() : fs::path(f.state);
  smoke::SmokeOptions smoke{.gpus = "auto"};
  smoke::RecordOptions records;
  f.smoke.fill(smoke, records);  // bad smoke flags and profiles are refused here, before anything runs
  records.peaks = smoke::kb_peaks(kb);
  auto target = nightly::parse_registry(f.stage.empty() ? f.registry : f.stage);
  auto shard = nightly::parse_shard(f.shard);
  std::optional<image::Reference> release;
  if (!f.stage.empty()) release = nightly::parse_registry(f.registry);
  nightly::KbCheckOptions kb_opt{.check = f.kb_check || !f.kb_index.empty(), .mirror = f.kb_index, .kb = &kb};
  if (!f.kb_index.empty())
    kb_opt.index = kb::mirror_options(f.kb_index, "--kb-index");  // bad input: refused before anything runs
  nightly::NightlyRequest req{.inputs = std::vector<fs::path>(f.inputs.begin(), f.inputs.end()),
                              .only = f.only,
                              .state = state,
                              .report = f.report,
                              .options = {.build = {.jobs = f.jobs,
                                                    .log_dir = state / "logs",
                                                    .timeout = std::chrono::seconds(f.timeout),
                                                    .keep_stages = f.keep_stages},
                                          .target = target,
                                          .shard = shard,
                                          .matrix = joined(f.inputs),
                                          .gpus = smoke::settings_key(smoke),  // also the smoke cache key
                                          .fresh_smoke = f.fresh_smoke,
                                          .kb = kb_opt},
                              .steps = {.target = target,
                                        .key = f.key,
                                        .passphrase_env = f.passphrase_env,
                                        .smoke = smoke,
                                        .records = records,
                                        .profile = strings::join(f.smoke.profiles, ","),
                                        .transport = f.registry_flags.transport(),
                                        .kb = &kb},
                              .release = release,
                              .kb = &kb};
  req.engine = &engine::local_engine();  // the command's one engine, handed down
  req.log = [](const std::string& line) { std::cerr << line << std::endl; };
  req.base_registry = builder::registry_digest;
  return req;
}

int run_nightly_cmd(const NightlyFlags& f) {
  auto kb = f.kb.load();  // the run's one KB
  nightly::NightlyRequest req = nightly_request(f, kb);
  f.reproducible.apply(req.options.build);
  req.reproduce = f.reproduce;
  print_progress(req.options.build, "nightly", f.quiet);
  auto report = nightly::nightly(req);
  print_summary(report, f.report);
  return report.ok() ? 0 : 1;
}

int run_merge(const NightlyFlags& f) {
  if (f.report.empty()) throw InputError("nightly merge: expected --report DIR for the merged report, found none");
  std::vector<fs::path> dirs(f.merge_dirs.begin(), f.merge_dirs.end());
  auto merged = nightly::merge_reports(dirs, f.report);
  print_summary(merged, f.report);
  return merged.ok() ? 0 : 1;
}

// `nightly promote`: every staged cell of the report into its release registry (nightly/nightly_promote.h).
int run_promote(const NightlyFlags& f) {
  if (f.from_report.empty() || f.sign_key.empty())
    throw InputError("nightly promote: expected --from-report DIR --sign-key KEY; one of them is missing");
  sign::Pkey key = sign::load_signing_key(f.sign_key, f.passphrase_env);
  sign::Pkey pub = f.public_key.empty() ? nullptr : sign::load_public_key(f.public_key);
  auto kb = f.kb.load();
  auto cells = nightly::promote_report({.from_report = f.from_report,
                                        .public_key = pub ? pub.get() : key.get(),
                                        .sign_key = key.get(),
                                        .kb = &kb,
                                        .transport = f.registry_flags.transport(),
                                        .policy = f.policy.policy()});
  bool ok = true;
  for (auto& c : cells) {
    std::cout << (c.ok ? "promoted " : "REFUSED  ") << c.from << " -> " << c.to << ": " << c.line << "\n";
    ok = ok && c.ok;
  }
  std::cout << "nightly promote: " << cells.size() << " cell(s), "
            << (ok ? "all promoted" : "some refused (their release tags did not move)") << "\n";
  return ok ? 0 : 1;
}

int run_collect(const NightlyFlags& f) {
  if (f.from_report.empty() || f.report.empty())
    throw InputError("nightly collect: expected RESULT.json… --from-report DIR --report OUT; one of them is missing");
  auto kb = f.kb.load();  // the throughput floors the collected results are judged against
  nightly::CollectOptions o{
      .from_report = f.from_report,
      .records = {.record = !f.smoke.no_record, .records = f.smoke.records, .peaks = smoke::kb_peaks(kb)},
      .key = f.key,
      .passphrase_env = f.passphrase_env,
      .transport = f.registry_flags.transport()};
  for (auto& r : f.collect_files) o.results.push_back(r);
  auto report = nightly::collect_results(o);
  nightly::write_report(f.report, report);  // each cell's log from --from-report's logs/ only (read_report)
  print_summary(report, f.report);
  return report.ok() ? 0 : 1;
}

Registration nightly_registration(
    {"nightly",
     "Build, smoke, push by digest, sign and tag every cell of a matrix; write a report "
     "(`nightly merge` joins shard reports)",
     [](CLI::App& sub) -> Action {
       auto f = std::make_shared<NightlyFlags>();
       sub.add_option("matrix", f->inputs,
                      "matrix file(s) or folder(s) of generated cells: one run, "
                      "one report");
       sub.add_option("--registry", f->registry,
                      "HOST[:PORT]/NAMESPACE to publish to (the release "
                      "registry when --stage-repository is given)");
       CLI::Option* stage =
           sub.add_option("--stage-repository", f->stage,
                          "HOST[:PORT]/NAMESPACE to publish to instead (signed, tagged there); the report "
                          "gives each cell the `imgtool promote --to` command that releases it into --registry");
       sub.add_option("--key", f->key,
                      "private signing key: a PEM file (mode 0600; imgtool keygen) or env://VAR (the PEM text in VAR, "
                      "removed from the environment before any program starts)");
       sub.add_option("--passphrase-env", f->passphrase_env, "env var holding the key's passphrase");
       sub.add_option("--report", f->report, "report folder (md, html, json, junit)");
       sub.add_option("--shard", f->shard, "i/n: this runner's share of the cells (default 1/1)");
       f->smoke.add(sub, kSmokePart);
       f->kb.add(sub);
       sub.add_option("-j,--jobs", f->jobs, "parallel docker builds")->check(CLI::Range(1, 64));
       sub.add_option("--only", f->only, "only these tags")->delimiter(',');
       sub.add_option("--state", f->state, "state folder (default: the imgtool cache folder)");
       sub.add_option("--timeout", f->timeout, "seconds per docker build (default 3600)");
       f->registry_flags.add(sub);
       sub.add_flag("--fresh-smoke", f->fresh_smoke, "re-run the smoke even for unchanged images");
       sub.add_flag("--keep-stages", f->keep_stages,
                    "keep each cell's first stage (wheels and venv) as layer cache; default: removed once built");
       f->reproducible.add(sub);
       sub.add_option("--reproduce", f->reproduce,
                      "after publishing, rebuild N published cells with --no-cache and compare them with the registry "
                      "(a sample that moves with the day; imgtool reproduce); one that differs fails the run")
           ->check(CLI::Range(0, 1000));
       sub.add_flag("--kb-check", f->kb_check,
                    "also check the KB against PyPI and Paddle's index (imgtool kb check; network): the "
                    "report lists the releases it lacks (default: the report shows the KB's age only)");
       sub.add_option("--kb-index", f->kb_index,
                      "URL of a mirror serving both indexes for --kb-check "
                      "(as imgtool kb check --index; implies --kb-check)");
       sub.add_flag("-q,--quiet", f->quiet, "no progress lines on stderr (the summary, report and errors still print)");
       CLI::App* merge = sub.add_subcommand("merge", "Join shard report folders into one report");
       merge->add_option("dirs", f->merge_dirs, "shard report folders")->required();
       merge->add_option("--report", f->report, "merged report folder")->required();
       CLI::App* collect = sub.add_subcommand(
           "collect", "Fold GPU smoke results (probe JSON from Kubernetes Jobs, saved as <tag>.json) into a report");
       collect->add_option("results", f->collect_files, "probe result files, one per cell, named <tag>.json");
       collect->add_option("--from-report", f->from_report, "the nightly report folder the cells are in");
       collect->add_option("--report", f->report, "report folder to write (may be the same)");
       collect->add_option("--records", f->smoke.records, "throughput records file (default: verify's)");
       collect->add_flag("--no-record", f->smoke.no_record, "do not store nor judge throughput");
       collect->add_option("--key", f->key,
                           "private key (file or env://VAR): attest each result as the "
                           "cell's hardware evidence for its published digest (smoke/evidence.h)");
       collect->add_option("--passphrase-env", f->passphrase_env, "env var holding --key's passphrase");
       f->registry_flags.add(*collect);
       CLI::App* promote =
           sub.add_subcommand("promote",
                              "Promote every cell a staged nightly published into the release registry (each a "
                              "release::promote: gpu cells need hardware evidence)");
       promote->add_option("--from-report", f->from_report, "the staged nightly's report folder")->required();
       promote
           ->add_option("--sign-key", f->sign_key,
                        "the release key (a file, or env://VAR): signs and "
                        "attests in the release repository")
           ->required();
       promote->add_option("--key", f->public_key,
                           "public key the staged digests are signed with "
                           "(default: --sign-key's public half)");
       promote->add_option("--passphrase-env", f->passphrase_env, "env var holding --sign-key's passphrase");
       f->registry_flags.add(*promote);
       f->policy.add(*promote);  // --allow-without-gpu-smoke: the override is recorded on each release signature
       return [f, merge, collect, promote, stage] {
         // An empty value is an unset CI variable, not "no staging": publishing to the release
         // registry instead would skip the hardware-evidence step promote exists for.
         if (stage->count() && f->stage.empty())
           throw InputError(
               "--stage-repository: expected HOST[:PORT]/NAMESPACE, found an empty value (an unset "
               "variable?)");
         if (merge->parsed()) return run_merge(*f);
         if (promote->parsed()) return run_promote(*f);
         return collect->parsed() ? run_collect(*f) : run_nightly_cmd(*f);
       };
     }});

}  // namespace
}  // namespace imgtool::cli
