// imgtool kb derive WHEEL… [--json]: the knowledge-base rows a Paddle wheel implies (kb/derive.h).
#include <iostream>

#include "cli/subcommand.h"
#include "core/error.h"
#include "kb/derive.h"

namespace imgtool::cli {
namespace {

struct KbFlags {
  std::vector<std::string> wheels;
  bool json = false;
};

int run_derive(const KbFlags& f) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& w : f.wheels) {
    kb::DerivedRows d = kb::derive(kb::read_wheel(w));
    if (f.json) all.push_back(kb::to_json(d));
    else std::cout << kb::render_yaml(d) << "\n";
  }
  if (f.json) std::cout << all.dump(2) << "\n";
  return 0;
}

Registration kb_registration({"kb", "The knowledge base against its sources: rows derived from a wheel (kb derive)",
                              [](CLI::App& sub) -> Action {
                                auto f = std::make_shared<KbFlags>();
                                sub.require_subcommand(1);
                                CLI::App* derive = sub.add_subcommand(
                                    "derive", "Print the KB rows a Paddle wheel implies (CUDA, cuDNN, NCCL, TensorRT, "
                                              "nvidia-* pins, Python tag, compiled GPU architectures), citing its sha256");
                                derive->add_option("wheels", f->wheels, "wheel files (.whl)")->required();
                                derive->add_flag("--json", f->json, "print JSON");
                                return [f] { return run_derive(*f); };
                              }});

}  // namespace
}  // namespace imgtool::cli
