#include "host/select.h"

#include <algorithm>

#include "core/error.h"
#include "core/strings.h"
#include "core/version.h"
#include "matrix/host.h"

namespace imgtool::host {

namespace {

Version ver(const std::string& s) { return Version::parse(s).value_or(Version{{0}, "0"}); }

// Newest Paddle, then newest Python.
bool better_cpu(const matrix::Cell& a, const matrix::Cell& b) {
  if (ver(a.paddle) != ver(b.paddle)) return ver(a.paddle) > ver(b.paddle);
  if (ver(a.python) != ver(b.python)) return ver(a.python) > ver(b.python);
  return a.tag < b.tag;
}

// "Better-looking" than the chosen cell: newer Paddle, or the same Paddle with newer CUDA.
bool looks_better(const matrix::Cell& c, const matrix::Cell& chosen) {
  if (ver(c.paddle) != ver(chosen.paddle)) return ver(c.paddle) > ver(chosen.paddle);
  return c.variant == "gpu" && (chosen.variant != "gpu" || ver(c.cuda) > ver(chosen.cuda));
}

SelectResult select_cpu(const std::vector<matrix::Cell>& cells, const std::string& cpu_arch, SelectResult r) {
  std::vector<matrix::Cell> cpu;
  for (auto& c : cells) {
    if (c.variant == "cpu")
      cpu.push_back(c);
    else
      r.passed_over.push_back(
          {c.tag, "host-no-gpu", "gpu image (CUDA " + c.cuda + "): this host has no NVIDIA driver, so it cannot run"});
  }
  std::sort(cpu.begin(), cpu.end(), better_cpu);
  if (cpu.empty()) return r;
  r.chosen = cpu.front();
  r.why = {"cpu image: a linux/" + cpu_arch + " image, runs on this " + cpu_arch + " host without a GPU",
           "newest Paddle (" + cpu.front().paddle + ") and Python (" + cpu.front().python + ") among " +
               std::to_string(cpu.size()) + " cpu tag(s)"};
  return r;
}

SelectResult select_gpu(const std::vector<matrix::Cell>& cells, const matrix::KnowledgeBase& kb, const SelectHost& h,
                        const SelectPolicy& p, const std::string& cpu_arch, SelectResult r) {
  auto q = matrix::query_host(cells, kb, {h.driver, h.gpu, p.allow_unknown_archs});
  r.host =
      q.gpu.name + " (compute capability " + q.gpu.cc + "), driver " + h.driver + ", CPU " + cpu_arch + " — " + h.from;
  if (!q.gpu_note.empty()) r.host += "; " + q.gpu_note;
  if (q.fits.empty()) {
    for (auto& x : q.rejected) r.passed_over.push_back({x.cell.tag, x.rule, x.reason});
    return r;
  }
  const matrix::Cell& c = q.fits.front().cell;
  r.chosen = c;
  auto floor = matrix::driver_floor(c, kb);
  const matrix::ArchSupport* a = kb.arch_for_cc(q.gpu.cc);
  r.why.push_back("driver floor: " + h.driver + " >= " + floor.driver + " (" + floor.rule + ")");
  if (a)
    r.why.push_back("architecture: " + a->name + " (compute capability " + q.gpu.cc + ") is served by CUDA " +
                    a->first_cuda + (a->last_cuda.empty() ? "+" : " to " + a->last_cuda) + "; the image has CUDA " +
                    c.cuda);
  r.why.push_back("kernels: " + q.fits.front().kernels);
  r.why.push_back("platform: linux/" + cpu_arch + ", this host's CPU");
  r.why.push_back("compatibility: " + q.fits.front().note);
  for (auto& x : q.rejected)
    if (looks_better(x.cell, c)) r.passed_over.push_back({x.cell.tag, x.rule, x.reason});
  return r;
}

// The host's CPU: given, else the GPU's KB row (an arm64-only superchip), else amd64 (assumed).
std::string host_cpu(const SelectHost& h, const matrix::KnowledgeBase& kb, std::string& why) {
  if (!h.cpu_arch.empty()) {
    why = h.from;  // "given by hand" or this host's uname
    return h.cpu_arch;
  }
  if (!h.gpu.empty()) {
    auto gpus = kb.find_gpus(h.gpu);
    if (!gpus.empty() && !gpus.front()->host_cpu.empty()) {
      why = gpus.front()->name + " comes with an " + gpus.front()->host_cpu + " CPU (matrix/kb/gpus.yaml host_cpu)";
      return gpus.front()->host_cpu;
    }
  }
  why = "assumed; --host-arch to say otherwise";
  return "amd64";
}

// Cells whose platform is not the host's CPU go to passed_over: they do not start ("exec format error").
std::vector<matrix::Cell> runnable_here(const std::vector<matrix::Cell>& cells, const SelectPolicy& p,
                                        const std::string& cpu, const std::string& cpu_why, SelectResult& r) {
  std::vector<matrix::Cell> out;
  for (const auto& c : cells) {
    auto it = p.platforms.find(c.tag);
    std::string platform = it == p.platforms.end() ? "linux/amd64" : it->second;
    if (platform == "linux/" + cpu) {
      out.push_back(c);
      continue;
    }
    r.passed_over.push_back({c.tag, "host-platform",
                             platform + " image: this host's CPU is " + cpu + " (" + cpu_why +
                                 "), so it does not start (\"exec format error\")"});
  }
  return out;
}

}  // namespace

SelectResult select_tag(const std::vector<matrix::Cell>& cells, const std::vector<PassedOver>& refused,
                        const matrix::KnowledgeBase& kb, const SelectHost& h, const SelectPolicy& p) {
  SelectResult r;
  r.passed_over = refused;
  if (!h.driver.empty() && h.gpu.empty())
    throw InputError("--gpu: expected the host's GPU model with --host-driver, found nothing");
  std::string cpu_why, cpu = host_cpu(h, kb, cpu_why);
  auto here = runnable_here(cells, p, cpu, cpu_why, r);
  if (h.driver.empty()) {
    r.host = "no NVIDIA driver, CPU " + cpu + " — " + h.from + ": cpu images only";
    return select_cpu(here, cpu, r);
  }
  return select_gpu(here, kb, h, p, cpu, r);
}

nlohmann::json to_json(const SelectResult& r) {
  nlohmann::json passed = nlohmann::json::array();
  for (auto& p : r.passed_over) passed.push_back({{"tag", p.tag}, {"rule", p.rule}, {"why", p.why}});
  nlohmann::json j{{"host", r.host}, {"tag", r.chosen ? r.chosen->tag : ""}, {"why", r.why}, {"passed_over", passed}};
  if (!r.digest.empty()) j["digest"] = r.digest, j["pull"] = r.repository + "@" + r.digest;
  return j;
}

// Tags, labels and registry messages are shown through strings::printable.
std::string render_text(const SelectResult& r) {
  using strings::printable;
  std::string out = "host: " + printable(r.host) + "\n";
  if (!r.chosen)
    out += "no tag fits this host\n";
  else
    out += "best tag: " + printable(r.chosen->tag) + "\n";
  if (r.chosen && !r.digest.empty())
    out += "  verified: its signature holds for " + r.digest + "; pull " + r.repository + "@" + r.digest +
           " for exactly that image\n";
  for (auto& w : r.why) out += "  fits: " + printable(w) + "\n";
  if (!r.passed_over.empty()) out += "passed over:\n";
  for (auto& p : r.passed_over) out += "  " + printable(p.tag) + "  [" + p.rule + "] " + printable(p.why) + "\n";
  return out;
}

}  // namespace imgtool::host
