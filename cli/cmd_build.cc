// imgtool build INPUT [INPUT…]: plan → generate (into the state folder) → docker build
// every kept cell. INPUT is a matrix file or a folder of generated cells.
#include <iostream>

#include "builder/build_driver.h"
#include "builder/cell_source.h"
#include "cli/kb_flag.h"
#include "cli/progress_printer.h"
#include "cli/reproducible_flag.h"
#include "cli/subcommand.h"

namespace imgtool::cli {
namespace {

namespace fs = std::filesystem;

struct BuildFlags {
  std::vector<std::string> inputs;
  std::string state, image_prefix;
  std::vector<std::string> only;
  KbFlag kb;
  int jobs = 1, timeout = 3600, attempts = 3;
  bool json = false, force = false, quiet = false, keep_stages = false;
  ReproducibleFlag reproducible;
};

int run_build(const BuildFlags& f) {
  fs::path state = f.state.empty() ? builder::default_state_dir() : fs::path(f.state);
  auto kb = f.kb.load();             // the run's one KB: a bad --kb is refused before the state folder is taken
  builder::StateStore store(state);  // one run per state folder: taken before generating into it
  engine::Engine& docker = engine::local_engine();  // the run's one engine ($DOCKER_HOST)
  auto src = builder::load_cells(std::vector<fs::path>(f.inputs.begin(), f.inputs.end()), state, kb, &docker,
                                 builder::registry_digest);
  auto cells = builder::select_tags(src.cells, f.only);
  builder::BuildOptions opt{.jobs = f.jobs,
                            .log_dir = state / "logs",
                            .image_prefix = f.image_prefix,
                            .timeout = std::chrono::seconds(f.timeout),
                            .max_attempts = f.attempts,
                            .force = f.force,
                            .keep_stages = f.keep_stages};
  f.reproducible.apply(opt);
  print_progress(opt, "build", f.quiet);
  if (!f.quiet)
    for (const auto& line : src.pinned) std::cerr << "build: " << line << std::endl;
  std::cerr << "build: " << cells.size() << " cell(s) from " << builder::describe_dirs(src) << ", state "
            << store.path().string() << ", " << docker.builder_kind() << " builder, -j " << f.jobs << std::endl;
  auto rep = builder::build_cells(cells, opt, docker, store);
  if (f.json)
    std::cout << builder::to_json(rep).dump(2) << "\n";
  else
    std::cout << builder::summary_table(rep);
  return rep.ok() ? 0 : 1;
}

Registration build_registration(
    {"build", "Build the images of a matrix (or a folder of generated cells) with docker", [](CLI::App& sub) -> Action {
       auto f = std::make_shared<BuildFlags>();
       sub.add_option("input", f->inputs, "matrix file(s) (YAML/JSON) or folder(s) of generated cells")->required();
       sub.add_option("-j,--jobs", f->jobs, "parallel docker builds")->check(CLI::Range(1, 64));
       sub.add_option("--only", f->only, "build only these tags")->delimiter(',');
       sub.add_option("--state", f->state,
                      "state folder (state.db, logs/, generated/); "
                      "default: the imgtool cache folder");
       sub.add_option("--timeout", f->timeout, "seconds per docker build (default 3600)");
       sub.add_option("--attempts", f->attempts, "tries per build on transient failures (default 3)")
           ->check(CLI::Range(1, 10));
       sub.add_option("--image-prefix", f->image_prefix, "prefix of local image names");
       f->kb.add(sub);
       sub.add_flag("--force", f->force, "build even cells that are up to date");
       sub.add_flag("--keep-stages", f->keep_stages,
                    "keep each cell's first stage (wheels and venv) as layer cache; default: removed once built");
       f->reproducible.add(sub);
       sub.add_flag("--json", f->json, "print the summary as JSON");
       sub.add_flag("-q,--quiet", f->quiet, "no progress lines on stderr (the summary and errors still print)");
       return [f] { return run_build(*f); };
     }});

}  // namespace
}  // namespace imgtool::cli
