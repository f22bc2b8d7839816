// imgtool nightly M --registry HOST:PORT/NS --key K --report DIR [--shard i/n]
//   plan → generate → build → smoke → (passed only) push by digest → sign → move tag.
// imgtool nightly merge DIR… --report DIR   joins shard reports.
#include <iostream>

#include "builder/cell_source.h"
#include "builder/nightly.h"
#include "builder/nightly_steps_real.h"
#include "builder/report.h"
#include "cli/subcommand.h"
#include "core/error.h"

namespace imgtool::cli {
namespace {

namespace fs = std::filesystem;

namespace bt = imgtool::builder;

struct NightlyFlags {
  std::string input, registry, key, report, shard = "1/1", state, passphrase_env, ca_file, records, shm_size;
  std::string gpus = "none";
  std::vector<std::string> only, merge_dirs;
  int jobs = 1, timeout = 3600;
  bool fresh_smoke = false, insecure_http = false;
};

void copy_logs(const nlohmann::json& report, const fs::path& dir) {
  fs::create_directories(dir / "logs");
  for (auto& c : report["cells"]) {
    fs::path log = c["build"].value("log", "");
    std::error_code ec;
    if (!log.empty() && fs::exists(log))
      fs::copy_file(log, dir / "logs" / log.filename(), fs::copy_options::overwrite_existing, ec);
  }
}

void print_summary(const nlohmann::json& r, const fs::path& dir) {
  std::cout << "nightly: " << (r["ok"].get<bool>() ? "OK" : "FAILED") << " — " << r["cells"].size() << " cell(s), "
            << r.value("docker_builds", 0) << " docker build(s), " << r.value("seconds", 0.0) << " s\n";
  for (auto& c : r["cells"])
    std::cout << "  " << c.value("tag", "") << ": build " << c["build"].value("status", "") << ", smoke "
              << c["smoke"].value("status", "") << ", publish " << c["publish"].value("status", "") << ' '
              << c["publish"].value("digest", "") << "\n";
  std::cout << "report: " << (dir / "report.html").string() << " (also report.md, nightly.json, junit.xml)\n";
}

bt::NightlyOptions nightly_options(const NightlyFlags& f, const fs::path& state) {
  bt::NightlyOptions o;
  o.build.jobs = f.jobs;
  o.build.log_dir = state / "logs";
  o.build.timeout = std::chrono::seconds(f.timeout);
  o.build.on_event = [](const std::string& line) { std::cerr << "nightly: " << line << std::endl; };
  o.target = bt::parse_registry(f.registry);
  o.shard = bt::parse_shard(f.shard);
  o.matrix = f.input;
  o.gpus = f.gpus;
  o.fresh_smoke = f.fresh_smoke;
  return o;
}

int run_nightly_cmd(const NightlyFlags& f) {
  if (f.input.empty() || f.registry.empty() || f.key.empty() || f.report.empty())
    throw InputError("nightly: expected MATRIX --registry HOST:PORT/NS --key KEY --report DIR; "
                     "one of them is missing (see imgtool nightly --help)");
  fs::path state = f.state.empty() ? bt::default_state_dir() : fs::path(f.state);
  auto opt = nightly_options(f, state);
  auto steps = bt::make_real_steps({.target = opt.target, .key = f.key, .passphrase_env = f.passphrase_env,
                                    .gpus = f.gpus, .shm_size = f.shm_size, .records = f.records,
                                    .ca_file = f.ca_file, .insecure_http = f.insecure_http});
  auto src = bt::load_cells(f.input, state);
  auto cells = bt::select_shard(bt::select_tags(src.cells, f.only), opt.shard);
  std::cerr << "nightly: shard " << opt.shard.text() << ": " << cells.size() << " of " << src.cells.size()
            << " cell(s) from " << src.generated_dir.string() << std::endl;
  bt::StateStore store(state);
  bt::CliDockerRunner docker;
  auto report = bt::run_nightly(cells, opt, docker, store, steps.get());
  copy_logs(report, f.report);
  bt::write_report(f.report, report);
  print_summary(report, f.report);
  return report["ok"].get<bool>() ? 0 : 1;
}

int run_merge(const NightlyFlags& f) {
  if (f.report.empty()) throw InputError("nightly merge: expected --report DIR for the merged report, found none");
  std::vector<fs::path> dirs(f.merge_dirs.begin(), f.merge_dirs.end());
  auto merged = bt::merge_reports(dirs);
  for (auto& d : dirs) {
    std::error_code ec;
    if (fs::exists(d / "logs"))
      fs::copy(d / "logs", fs::path(f.report) / "logs",
               fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
  }
  bt::write_report(f.report, merged);
  print_summary(merged, f.report);
  return merged["ok"].get<bool>() ? 0 : 1;
}

Registration reg({"nightly",
                  "Build, smoke, push by digest, sign and tag every cell of a matrix; write a report "
                  "(`nightly merge` joins shard reports)",
                  [](CLI::App& sub) -> Action {
                    auto f = std::make_shared<NightlyFlags>();
                    sub.add_option("matrix", f->input, "matrix file or folder of generated cells");
                    sub.add_option("--registry", f->registry, "HOST[:PORT]/NAMESPACE to publish to");
                    sub.add_option("--key", f->key, "private signing key (PEM, mode 0600; imgtool keygen)");
                    sub.add_option("--passphrase-env", f->passphrase_env, "env var holding the key's passphrase");
                    sub.add_option("--report", f->report, "report folder (md, html, json, junit)");
                    sub.add_option("--shard", f->shard, "i/n: this runner's share of the cells (default 1/1)");
                    sub.add_option("--gpus", f->gpus, "docker run --gpus for the smoke (default none)");
                    sub.add_option("--shm-size", f->shm_size, "docker run --shm-size for the smoke");
                    sub.add_option("-j,--jobs", f->jobs, "parallel docker builds")->check(CLI::Range(1, 64));
                    sub.add_option("--only", f->only, "only these tags")->delimiter(',');
                    sub.add_option("--state", f->state, "state folder (default: the imgtool cache folder)");
                    sub.add_option("--timeout", f->timeout, "seconds per docker build (default 3600)");
                    sub.add_option("--records", f->records, "throughput records file (default: verify's)");
                    sub.add_option("--ca-file", f->ca_file, "CA certificate (PEM) for the registry");
                    sub.add_flag("--insecure-http", f->insecure_http, "allow plain http to a non-loopback registry");
                    sub.add_flag("--fresh-smoke", f->fresh_smoke, "re-run the smoke even for unchanged images");
                    CLI::App* merge = sub.add_subcommand("merge", "Join shard report folders into one report");
                    merge->add_option("dirs", f->merge_dirs, "shard report folders")->required();
                    merge->add_option("--report", f->report, "merged report folder")->required();
                    return [f, merge] { return merge->parsed() ? run_merge(*f) : run_nightly_cmd(*f); };
                  }});

}  // namespace
}  // namespace imgtool::cli
