// imgtool generate FILE --out DIR [--json] [--kb DIR] [--templates DIR]
// Thin front end: plans the matrix (matrix/matrix.h), generates one folder
// per kept cell (dockerfiles/generate.h), prints a summary.
#include <iostream>
#include <memory>

#include "cli/kb_flag.h"
#include "cli/subcommand.h"
#include "core/error.h"
#include "dockerfiles/generate.h"
#include "matrix/matrix.h"

namespace imgtool::cli {
namespace {

struct GenerateCliOptions {
  std::string file, out, templates_dir, today;
  KbFlag kb;
  bool json = false;
};

nlohmann::json summary_json(const matrix::Plan& plan, const std::vector<dockerfiles::GeneratedCell>& cells,
                            const std::string& out) {
  nlohmann::json list = nlohmann::json::array();
  for (auto& c : cells)
    list.push_back({{"tag", c.tag},
                    {"dir", c.dir.string()},
                    {"inputs_hash", c.inputs_hash},
                    {"context_files", c.context_files},
                    {"hard_linked", c.hard_linked},
                    {"warnings", c.warnings}});
  return {{"out", out},
          {"kb_version", plan.kb_version},
          {"cells", list},
          {"skipped", plan.skipped.size()},
          {"warnings", plan.warnings}};
}

void print_summary(const matrix::Plan& plan, const std::vector<dockerfiles::GeneratedCell>& cells,
                   const std::string& out) {
  std::cout << "generated " << cells.size() << " folders in " << out << " (kb " << plan.kb_version << "; "
            << plan.skipped.size() << " combinations skipped, see imgtool matrix)\n";
  for (auto& c : cells) {
    std::cout << "  " << c.tag << std::string(c.tag.size() < 38 ? 38 - c.tag.size() : 1, ' ')
              << c.inputs_hash.substr(0, 19);
    if (c.context_files) std::cout << "  " << c.context_files << " context files (" << c.hard_linked << " hard-linked)";
    if (!c.warnings.empty()) std::cout << "  " << c.warnings.size() << " warning(s)";
    std::cout << "\n";
  }
  for (auto& w : plan.warnings) std::cout << "WARNING: " << w << "\n";
}

int run_generate(const GenerateCliOptions& o) {
  if (o.out.empty()) throw InputError("--out: expected a folder for the generated Dockerfiles");
  auto kb = o.kb.load();
  matrix::Plan plan = matrix::plan_matrix(o.file, kb, {o.today});
  auto cells = dockerfiles::generate(plan.kept, {o.out, o.templates_dir, plan.kb_version, plan.kb_released});
  if (o.json)
    std::cout << summary_json(plan, cells, o.out).dump(2) << "\n";
  else
    print_summary(plan, cells, o.out);
  return 0;
}

Registration generate_registration{
    {"generate", "Generate one Dockerfile folder (Dockerfile, cell.json, context files) per kept matrix cell",
     [](CLI::App& sub) -> Action {
       auto o = std::make_shared<GenerateCliOptions>();
       sub.add_option("file", o->file, "matrix file (YAML or JSON), e.g. matrix/paddle.yaml")->required();
       sub.add_option("--out", o->out, "output folder, replaced as a whole (must be new, empty, or made by generate)")
           ->required();
       sub.add_flag("--json", o->json, "machine-readable summary");
       o->kb.add(sub);
       sub.add_option("--templates", o->templates_dir, "template folder (default: <data dir>/dockerfiles)");
       sub.add_option("--today", o->today, "date for the Python end-of-life check, YYYY-MM-DD (default: today)");
       return [o] { return run_generate(*o); };
     }}};

}  // namespace
}  // namespace imgtool::cli
