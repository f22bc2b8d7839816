// imgtool smoke IMAGE: run the GPU smoke probe inside an image and judge it.
#include <iostream>
#include <memory>

#include "cli/subcommand.h"
#include "verify/records_judge.h"
#include "verify/smoke_report.h"
#include "verify/smoke_runner.h"

namespace imgtool::cli {
namespace {

struct SmokeFlags {
  verify::SmokeOptions opt;
  bool json = false;
  bool no_record = false;
  int timeout_s = 900;
  int reps = 0;
  std::string records;
};

// Stores the probe's throughput metrics and judges them (floors, history).
std::vector<verify::Judgement> judge_throughput(const SmokeFlags& f, const verify::SmokeResult& res) {
  auto recs = verify::records_from_probe(res.probe, res.image.digest, res.image.tag, verify::system_clock()());
  if (recs.empty() || f.no_record) return {};
  verify::RecordStore store(f.records.empty() ? verify::RecordStore::default_path() : f.records);
  return verify::record_and_judge(store, recs, verify::kb_peaks());
}

int run_smoke_cmd(SmokeFlags& f) {
  f.opt.timeout = std::chrono::seconds(f.timeout_s);
  if (f.reps > 0) f.opt.probe_args = {"--reps", std::to_string(f.reps)};
  verify::SmokeResult res = verify::run_smoke(f.opt);
  auto throughput = judge_throughput(f, res);
  verify::apply_throughput(res, throughput);
  if (f.json) {
    auto j = res.to_json();
    j["throughput"] = nlohmann::json::array();
    for (auto& t : throughput) j["throughput"].push_back(t.to_json());
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << verify::smoke_text(res, throughput);
  }
  return res.passed() ? 0 : 1;
}

Registration reg({"smoke", "Run the GPU smoke probe inside an image (docker run, probe mounted read-only) and judge it",
                  [](CLI::App& sub) -> Action {
                    auto f = std::make_shared<SmokeFlags>();
                    sub.add_option("image", f->opt.image, "image reference (local)")->required();
                    sub.add_option("--gpus", f->opt.gpus, "docker run --gpus value: all, device=0, …; none = no --gpus")
                        ->default_val("none");
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
                    return [f] { return run_smoke_cmd(*f); };
                  }});

}  // namespace
}  // namespace imgtool::cli
