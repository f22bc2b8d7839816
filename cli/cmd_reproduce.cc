// imgtool reproduce REF… [--matrix FILE…]: rebuild each image's cell with --no-cache from the matrix
// as it is now, normalize, compare digests (reproduce/reproduce.h). Exit 0 when every image is
// reproduced, 1 when one differs or cannot be rebuilt, 2 on bad input.
#include <iostream>
#include <nlohmann/json.hpp>

#include "builder/cell_source.h"
#include "cli/kb_flag.h"
#include "cli/sign_common.h"
#include "cli/subcommand.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/paths.h"
#include "reproduce/reproduce.h"

namespace imgtool::cli {
namespace {

namespace fs = std::filesystem;

struct ReproduceFlags {
  std::vector<std::string> refs, matrices;
  std::string rules, work;
  KbFlag kb;
  RegistryFlags registry;
  int timeout = 3600;
  bool json = false, quiet = false;
};

nlohmann::json to_json(const reproduce::ReproduceReport& r) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& i : r.images) {
    nlohmann::json j{{"ref", i.ref},
                     {"tag", i.tag},
                     {"outcome", reproduce::to_string(i.outcome)},
                     {"why", i.why},
                     {"digest", i.digest},
                     {"normalized_digest", i.normalized_digest},
                     {"rebuilt_digest", i.rebuilt_digest},
                     {"rebuilt_image_id", i.rebuilt_image_id},
                     {"source_date_epoch", i.epoch},
                     {"seconds", i.seconds}};
    if (i.outcome == reproduce::Outcome::differs) j["difference"] = image::render_difference(i.difference);
    list.push_back(j);
  }
  return {{"reproduced", r.ok()}, {"images", list}};
}

int run_reproduce(const ReproduceFlags& f) {
  std::vector<fs::path> matrices(f.matrices.begin(), f.matrices.end());
  if (matrices.empty()) matrices.push_back(fs::path(data_dir()) / "matrix" / "paddle.yaml");
  for (const auto& r : f.refs) image::parse_reference(r);  // a bad reference is bad input, before any work
  auto kb = f.kb.load();
  fs::path parent = f.work.empty() ? fs::path(cache_dir()) : fs::path(f.work);
  fs::create_directories(parent);
  PrivateTempDir work("reproduce-", parent);  // the rebuild's state, logs and normalized copies
  engine::Engine& docker = engine::local_engine();
  // The bases pinned as the builder pins them: an image built on a base made again is other inputs.
  auto src = builder::load_cells(matrices, work.path(), kb, &docker, builder::registry_digest);
  reproduce::ReproduceRequest req{
      .refs = f.refs,
      .cells = src.cells,
      .kb_version = src.kb_version,
      .engine = &docker,
      .transport = f.registry.transport(),
      .work_dir = work.path(),
      .rules = image::read_normalize_rules(f.rules.empty() ? image::default_normalize_rules() : fs::path(f.rules)),
      .build_timeout = std::chrono::seconds(f.timeout)};
  if (!f.quiet) req.on_event = [](const std::string& s) { std::cerr << s << std::endl; };
  reproduce::ReproduceReport rep = reproduce::reproduce(req);
  if (f.json)
    std::cout << to_json(rep).dump(2) << "\n";
  else
    std::cout << reproduce::render(rep);
  return rep.ok() ? 0 : 1;
}

Registration reproduce_registration{
    {"reproduce",
     "Rebuild each image's cell with --no-cache from the matrix, normalize, and compare digests (exit 0: "
     "reproduced)",
     [](CLI::App& sub) -> Action {
       auto f = std::make_shared<ReproduceFlags>();
       sub.add_option("ref", f->refs, "images: docker://REG/REPO:TAG, docker-daemon:NAME:TAG, oci:DIR:TAG")->required();
       sub.add_option("--matrix", f->matrices,
                      "the matrix file(s) the images were built from (default: <data dir>/matrix/paddle.yaml)");
       f->kb.add(sub);
       f->registry.add(sub);
       sub.add_option("--normalize-rules", f->rules, "the rules file (default: image/normalize_rules.tsv)");
       sub.add_option("--work", f->work,
                      "where the private work folder goes (the rebuild's normalized copy: GBs for a GPU cell); "
                      "default: the imgtool cache folder");
       sub.add_option("--timeout", f->timeout, "seconds for the rebuild (default 3600)")->check(CLI::Range(1, 86400));
       sub.add_flag("--json", f->json, "print the result as JSON");
       sub.add_flag("-q,--quiet", f->quiet, "no progress lines on stderr");
       return [f] { return run_reproduce(*f); };
     }}};

}  // namespace
}  // namespace imgtool::cli
