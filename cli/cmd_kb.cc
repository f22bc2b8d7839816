// imgtool kb derive WHEEL… [--json]: the knowledge-base rows a Paddle wheel implies (kb/derive.h).
// imgtool kb check [--index URL] [--kb DIR] [--json]: releases the package indexes have and the KB
// lacks (kb/check.h); exit 0 up to date, 1 stale or a page not read, 2 a malformed page.
#include <iostream>

#include "cli/kb_flag.h"
#include "cli/subcommand.h"
#include "core/error.h"
#include "kb/check.h"
#include "kb/derive.h"

namespace imgtool::cli {
namespace {

struct KbFlags {
  std::vector<std::string> wheels;
  bool json = false;
  std::string index;
  KbFlag kb;
  int timeout = 60;
};

int run_derive(const KbFlags& f) {
  auto kb = f.kb.load();
  nlohmann::json all = nlohmann::json::array();
  for (const auto& w : f.wheels) {
    kb::DerivedRows d = kb::derive(kb::read_wheel(w));
    kb::cross_check_loads(d, kb);
    if (f.json)
      all.push_back(kb::to_json(d));
    else
      std::cout << kb::render_yaml(d) << "\n";
  }
  if (f.json) std::cout << all.dump(2) << "\n";
  return 0;
}

int run_check(const KbFlags& f) {
  kb::CheckOptions o{.timeout = std::chrono::seconds(f.timeout)};
  if (!f.index.empty()) o = kb::mirror_options(f.index, "--index", o);
  auto k = f.kb.load();
  kb::CheckReport r = kb::check_kb(k, o);
  std::cout << (f.json ? kb::to_json(r).dump(2) + "\n" : kb::render_text(r));
  return r.exit_code();
}

void add_check(CLI::App& sub, const std::shared_ptr<KbFlags>& f) {
  CLI::App* check = sub.add_subcommand(
      "check",
      "List the releases PyPI (paddlepaddle, paddlepaddle-gpu, the NVIDIA wheels the bases pin) and Paddle's "
      "per-CUDA indexes have that the KB lacks, each with its date and the KB file to edit; print the KB's "
      "age. Exit 0 up to date, 1 stale or a page not read, 2 a malformed page");
  check->add_option("--index", f->index,
                    "a mirror serving both: URL/pypi/NAME/json and "
                    "URL/packages/stable/cuXYZ/paddlepaddle-gpu/ (plain http only on loopback; "
                    "default: https://pypi.org and https://www.paddlepaddle.org.cn/packages/stable)");
  f->kb.add(*check);
  check->add_option("--timeout", f->timeout, "seconds per page (default 60)")->check(CLI::Range(1, 3600));
  check->add_flag("--json", f->json, "print JSON");
}

Registration kb_registration(
    {"kb",
     "The knowledge base against its sources: rows derived from a wheel (kb derive), releases the package "
     "indexes have and it lacks (kb check)",
     [](CLI::App& sub) -> Action {
       auto f = std::make_shared<KbFlags>();
       sub.require_subcommand(1);
       CLI::App* derive =
           sub.add_subcommand("derive",
                              "Print the KB rows a Paddle wheel implies (CUDA, cuDNN, NCCL, TensorRT, "
                              "nvidia-* pins, Python tag, compiled GPU architectures), citing its sha256");
       derive->add_option("wheels", f->wheels, "wheel files (.whl)")->required();
       derive->add_flag("--json", f->json, "print JSON");
       f->kb.add(*derive);  // the load table the wheel's dlopen names are held against
       add_check(sub, f);
       return [f, derive] { return derive->parsed() ? run_derive(*f) : run_check(*f); };
     }});

}  // namespace
}  // namespace imgtool::cli
