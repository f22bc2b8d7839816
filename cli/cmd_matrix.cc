// imgtool matrix FILE [--json] [--explain SEL] [--host-driver V --gpu NAME]
// Thin front end: fills MatrixOptions, calls the matrix library, prints.
// imgtool plan FILE --emit github|gitlab|bake|k8s --out DIR   (emit/plan_emit.h)
#include <iostream>
#include <memory>
#include <set>

#include "cli/kb_flag.h"
#include "cli/sign_common.h"
#include "cli/subcommand.h"
#include "core/error.h"
#include "emit/plan_emit.h"
#include "matrix/explain.h"
#include "matrix/host.h"
#include "matrix/matrix.h"

namespace imgtool::cli {
namespace {

using namespace imgtool::matrix;

struct MatrixOptions {
  std::string file, explain, host_driver, gpu, today;
  bool allow_unknown_archs = false;
  KbFlag kb;
  bool json = false;
};

std::string pad(std::string s, size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' '); }
std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

void print_cells(const std::vector<Cell>& cells) {
  std::cout << pad("TAG", 38) << pad("PADDLE", 7) << pad("PY", 5) << pad("OS", 12) << pad("CUDA", 5) << pad("CUDNN", 6)
            << pad("TRT", 5) << pad("MIN-DRIVER", 11) << pad("BASE", 44) << "WARN\n";
  for (auto& c : cells)
    std::cout << pad(c.tag, 38) << pad(c.paddle, 7) << pad(c.python, 5) << pad(c.os, 12) << pad(or_dash(c.cuda), 5)
              << pad(or_dash(c.cudnn), 6) << pad(or_dash(c.trt), 5) << pad(or_dash(matrix::effective_min_driver(c)), 11)
              << pad(c.base_image, 44) << c.warnings.size() << "\n";
}

void print_plan(const Plan& p) {
  std::cout << "kept " << p.kept.size() << " cells (kb " << p.kb_version << "):\n";
  print_cells(p.kept);
  std::cout << "\nskipped " << p.skipped.size() << ":\n";
  for (auto& s : p.skipped)
    std::cout << "  [" << s.rule << "] " << s.reason << "\n      (source: " << s.source << ")\n";
  std::set<std::string> warnings;
  for (auto& c : p.kept)
    for (auto& w : c.warnings) warnings.insert(w);
  for (auto& w : p.warnings) warnings.insert(w);
  if (warnings.empty()) return;
  std::cout << "\nwarnings (" << warnings.size() << " distinct; per cell in --json):\n";
  for (auto& w : warnings) std::cout << "  WARNING: " << w << "\n";
}

int print_explain(const MatrixOptions& o, const KnowledgeBase& kb, const std::string& sel_text, bool json) {
  bool off_axis = false;
  auto items = explain_any(o.file, kb, parse_selector(sel_text), {o.today}, off_axis);
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (auto& i : items)
      j.push_back({{"axes", i.axes},
                   {"kept", i.kept},
                   {"tag", i.tag},
                   {"rule", i.rule},
                   {"reason", i.reason},
                   {"source", i.source},
                   {"sources", i.sources},
                   {"warnings", i.warnings}});
    std::cout << j.dump(2) << "\n";
    return items.empty() ? 2 : 0;
  }
  if (items.empty())
    throw InputError("--explain: expected a selector matching a combination of the matrix, found none for '" +
                     sel_text + "'");
  if (off_axis)
    std::cout << "not on the axes of " << o.file
              << "; judged against the knowledge base with the matrix's other axes:\n";
  if (auto sel = parse_selector(sel_text); sel.count("paddle"))
    if (std::string p = published_images(kb, sel.at("paddle")); !p.empty()) std::cout << p << "\n";
  for (auto& i : items) {
    if (!i.kept) {
      std::cout << "SKIPPED by rule " << i.rule << ": " << i.reason << "\n  source: " << i.source << "\n";
      continue;
    }
    std::cout << "KEPT " << i.tag << "\n";
    for (auto& s : i.sources) std::cout << "  relies on: " << s << "\n";
    for (auto& w : i.warnings) std::cout << "  WARNING: " << w << "\n";
  }
  return 0;
}

int print_host(const Plan& p, const KnowledgeBase& kb, const MatrixOptions& o) {
  HostResult r = query_host(p, kb, {o.host_driver, o.gpu, o.allow_unknown_archs});
  if (o.json) {
    nlohmann::json fits = nlohmann::json::array(), rej = nlohmann::json::array();
    for (auto& f : r.fits) fits.push_back({{"cell", f.cell}, {"full_compat", f.full_compat}, {"note", f.note}});
    for (auto& x : r.rejected)
      rej.push_back({{"tag", x.cell.tag}, {"rule", x.rule}, {"reason", x.reason}, {"source", x.source}});
    std::cout << nlohmann::json{{"gpu", r.gpu.name},
                                {"cc", r.gpu.cc},
                                {"driver", r.driver},
                                {"runs", fits},
                                {"rejected", rej}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << "host: " << r.gpu.name << " (compute capability " << r.gpu.cc << "), driver " << r.driver << "\n";
  if (!r.gpu_note.empty()) std::cout << "note: " << r.gpu_note << "\n";
  std::cout << "runs here, best first (" << r.fits.size() << "):\n";
  for (auto& f : r.fits) std::cout << "  " << pad(f.cell.tag, 38) << f.note << "; " << f.kernels << "\n";
  std::cout << "cannot run here (" << r.rejected.size() << "):\n";
  for (auto& x : r.rejected)
    std::cout << "  " << pad(x.cell.tag, 38) << "[" << x.rule << "] " << x.reason
              << (x.source.empty() ? "" : "\n      (source: " + x.source + ")") << "\n";
  return 0;
}

int run_matrix(const MatrixOptions& o) {
  if (o.host_driver.empty() != o.gpu.empty())
    throw InputError("--host-driver and --gpu: expected both, found only one");
  KnowledgeBase kb = o.kb.load();
  if (!o.explain.empty()) return print_explain(o, kb, o.explain, o.json);
  Plan plan = plan_matrix(o.file, kb, {o.today});
  if (!o.host_driver.empty()) return print_host(plan, kb, o);
  if (o.json)
    std::cout << to_json(plan).dump(2) << "\n";
  else
    print_plan(plan);
  return 0;
}

Registration matrix_registration{
    {"matrix",
     "Expand a matrix file against the compatibility knowledge base: kept cells, skipped cells with the rule and "
     "source",
     [](CLI::App& sub) -> Action {
       auto o = std::make_shared<MatrixOptions>();
       sub.add_option("file", o->file, "matrix file (YAML or JSON), e.g. matrix/paddle.yaml")->required();
       sub.add_flag("--json", o->json, "machine-readable output");
       sub.add_option("--explain", o->explain,
                      "why cells matching 'axis=value,…' are (not) kept, e.g. 'paddle=2.6.2,cuda=12.6'");
       sub.add_option("--host-driver", o->host_driver,
                      "only cells that run on a host with this NVIDIA driver (needs --gpu)");
       sub.add_option("--gpu", o->gpu, "the host's GPU (KB name, alias or nvidia-smi device name), e.g. V100");
       sub.add_flag("--allow-unknown-archs", o->allow_unknown_archs,
                    "with --host-driver: count GPU cells whose compiled GPU code is unknown as running (each says so)");
       o->kb.add(sub);
       sub.add_option("--today", o->today, "date for the Python end-of-life check, YYYY-MM-DD (default: today)");
       return [o] { return run_matrix(*o); };
     }}};

struct PlanFlags {
  std::string emit;
  imgtool::emit::PlanEmitOptions o;
  RegistryFlags registry;  // k8s: --ca-file, --insecure-http
};

int run_plan(PlanFlags& f) {
  if (f.emit.empty()) throw InputError("plan: expected --emit github, gitlab, bake or k8s, found none");
  f.o.emit = imgtool::emit::parse_emit(f.emit);
  f.o.transport = f.registry.transport();
  auto r = imgtool::emit::emit_plan(f.o);
  for (auto& n : r.notes) std::cerr << "plan: " << n << "\n";
  for (auto& w : r.written) std::cout << "wrote " << w.string() << "\n";
  return 0;
}

Registration plan_registration{
    {"plan",
     "Write the files that run a matrix elsewhere: a sharded CI matrix (github, gitlab), buildx "
     "bake files, Kubernetes GPU smoke Jobs (k8s)",
     [](CLI::App& sub) -> Action {
       auto f = std::make_shared<PlanFlags>();
       auto& o = f->o;
       sub.add_option("file", o.input, "matrix file (bake: or a folder `imgtool generate` wrote)")->required();
       sub.add_option("--emit", f->emit, "github | gitlab | bake | k8s");
       sub.add_option("--out", o.out, "output folder (files are replaced atomically)");
       sub.add_option("--shards", o.shards,
                      "github/gitlab: runners, each runs imgtool nightly --shard i/n (default 4)");
       sub.add_option("--runs-on", o.runs_on, "github: runs-on labels / gitlab: runner tags")->delimiter(',');
       sub.add_flag("--no-gpu-host", o.no_gpu_host,
                    "github/gitlab: runners have no GPU (nightly --no-gpu-host; "
                    "GPU smoke via --emit k8s)");
       sub.add_option("--registry", o.registry, "HOST[:PORT]/NAMESPACE (k8s: required; bake: tags and cache)");
       sub.add_option("--from-report", o.from_report,
                      "k8s: nightly report folder whose published digests the Jobs run");
       sub.add_flag("!--no-resolve", o.resolve_digests, "k8s: do not ask the registry for digests the report lacks");
       sub.add_option("--gpu", o.gpu_model, "k8s: GPU model for the nodeSelector (GPU feature discovery)");
       sub.add_option("--nonce", o.nonce,
                      "k8s: this run's nonce (8-12 lowercase hex; default: random) in every Job's name and probe");
       sub.add_option("--profile", o.profiles, "k8s: run profile(s) the Jobs run with (default: base)");
       sub.add_option("--set", o.sets, "k8s: key=value on top of the profile (imgtool run-config --keys)");
       sub.add_option("--kb", o.kb_dir, "knowledge-base folder (default: <data dir>/matrix/kb)");
       f->registry.add(sub);
       return [f] { return run_plan(*f); };
     }}};

}  // namespace
}  // namespace imgtool::cli
