// imgtool history --tag TAG: throughput over time, per GPU and driver.
#include <iostream>
#include <memory>

#include "cli/subcommand.h"
#include "smoke/history_view.h"

namespace imgtool::cli {
namespace {

struct HistoryFlags {
  smoke::HistoryOptions opt;
  std::string records;
  bool json = false;
};

int run_history(const HistoryFlags& f) {
  smoke::RecordStore store(f.records.empty() ? smoke::RecordStore::default_path() : f.records);
  auto h = smoke::history_json(store, f.opt);
  std::cout << (f.json ? h.dump(2) + "\n" : smoke::history_text(h));
  return 0;
}

Registration history_registration(
    {"history", "Show throughput records of an image tag over time, per GPU and driver", [](CLI::App& sub) -> Action {
       auto f = std::make_shared<HistoryFlags>();
       sub.add_option("--tag", f->opt.tag, "image tag (io.imgtool.tag) whose series to show")->required();
       sub.add_option("--gpu", f->opt.gpu, "only this GPU (device name as recorded)");
       sub.add_option("--metric", f->opt.metric, "only this metric (bandwidth_copy, gemm_fp16, …)");
       sub.add_option("--last", f->opt.last, "only the newest N points per series");
       sub.add_option("--records", f->records, "records SQLite file (default $IMGTOOL_RECORDS or <cache>/records.db)");
       sub.add_flag("--json", f->json, "print JSON");
       return [f] { return run_history(*f); };
     }});

}  // namespace
}  // namespace imgtool::cli
