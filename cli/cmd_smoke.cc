// imgtool smoke IMAGE: run the GPU smoke probe inside an image and judge it.
#include <iostream>
#include <memory>

#include "cli/smoke_flags.h"
#include "cli/subcommand.h"
#include "engine/engine.h"
#include "smoke/smoke_judge.h"
#include "smoke/smoke_report.h"
#include "smoke/smoke_runner.h"

namespace imgtool::cli {
namespace {

struct SmokeCmdFlags {
  smoke::SmokeOptions opt;  // the image and its expectations; the rest from `smoke`
  SmokeFlags smoke;         // shared with verify and nightly (cli/smoke_flags.h)
  bool json = false;
};

int run_smoke_cmd(SmokeCmdFlags& f) {
  smoke::RecordOptions records;
  f.smoke.fill(f.opt, records);
  auto [res, throughput] = smoke::smoke_and_judge(f.opt, records, engine::local_engine());
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
                    auto f = std::make_shared<SmokeCmdFlags>();
                    sub.add_option("image", f->opt.image, "image reference (local)")->required();
                    f->smoke.add(sub, kSmokeCommand);
                    sub.add_option("--expect-variant", f->opt.expect_variant,
                                   "gpu|cpu; default: the io.imgtool.variant label")
                        ->check(CLI::IsMember({"gpu", "cpu"}));
                    sub.add_option("--expect-cuda", f->opt.expect_cuda, "CUDA the image claims; default: io.imgtool.cuda");
                    sub.add_option("--python", f->opt.python, "the image's python (default python3 on the image's PATH)");
                    sub.add_flag("--json", f->json, "print the full result as JSON");
                    return [f] { return run_smoke_cmd(*f); };
                  }});

}  // namespace
}  // namespace imgtool::cli
