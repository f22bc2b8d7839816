#include "matrix/host.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/gpu_arch.h"

namespace imgtool::matrix {

namespace {

// A family name is fine when all its variants share the compute capability.
const GpuSpec& gpu_or_throw(const KnowledgeBase& kb, const std::string& name, std::string& note) {
  auto c = kb.find_gpus(name);
  if (c.size() == 1) return *c.front();
  std::string list;
  for (auto* g : c) list += (list.empty() ? "" : ", ") + g->name + " (cc " + g->cc + ")";
  bool same_cc = !c.empty() && std::all_of(c.begin(), c.end(), [&](auto* g) { return g->cc == c.front()->cc; });
  if (same_cc) {
    note = "'" + name + "' is ambiguous (" + list + "); all have compute capability " + c.front()->cc +
           ", which is all these rules need";
    return *c.front();
  }
  if (!c.empty())
    throw InputError("--gpu: expected one GPU model, found '" + name + "', which may be " + list +
                     " — add the memory size or form factor");
  std::set<std::string> known;
  for (auto& g : kb.gpus()) known.insert(g.aliases.empty() ? g.name : g.aliases.front());
  std::string k;
  for (auto& x : known) k += (k.empty() ? "" : ", ") + x;
  throw InputError("--gpu: expected a GPU listed in the knowledge base (" + k +
                   ", or a name as nvidia-smi prints it), found '" + name + "'");
}

// Empty when the GPU's architecture can run images of this CUDA version.
std::optional<HostReject> check_arch(const Cell& c, const GpuSpec& g, const KnowledgeBase& kb) {
  const ArchSupport* a = kb.arch_for_cc(g.cc);
  if (!a)
    return HostReject{c, "host-arch", "the KB has no architecture fact for compute capability " + g.cc,
                      kb.dir() + "/arch.yaml"};
  auto cuda = *Version::parse(c.cuda);
  std::string span = "CUDA " + a->first_cuda + (a->last_cuda.empty() ? "+" : " to " + a->last_cuda);
  if (cuda < *Version::parse(a->first_cuda) || (!a->last_cuda.empty() && cuda > *Version::parse(a->last_cuda)))
    return HostReject{c, "host-arch",
                      "CUDA " + c.cuda + " cannot serve a " + g.aliases.front() + ": " + a->name +
                          " (compute capability " + g.cc + ") is supported by " + span,
                      a->source};
  return std::nullopt;
}

constexpr const char* kArchsSource = "the build's compiled_archs (matrix/kb/paddle.yaml; imgtool kb derive)";

// Empty when the build's compiled GPU code (compiled_archs, io.imgtool.cuda-archs) runs on the GPU;
// unknown code is refused unless the query allows it.
// What is reported (not read) about a build's GPU code, for a refusal's text: "" when nothing is.
std::string reported_kernels(const Cell& c, const GpuSpec& g) {
  if (c.cuda_archs_reported.empty()) return "";
  std::string gap = kernel_gap(c.cuda_archs_reported, g.cc);
  return "; reported for this build (UNCONFIRMED, not read from a wheel: " + c.cuda_archs_reported_source +
         "): " + c.cuda_archs_reported + (gap.empty() ? ", which would run there" : ", which would not: " + gap);
}

std::optional<HostReject> check_kernels(const Cell& c, const GpuSpec& g, bool allow_unknown) {
  if (c.cuda_archs.empty() && !allow_unknown)
    return HostReject{c, "host-kernels",
                      "Paddle " + c.paddle + "'s CUDA " + c.cuda +
                          " build has no recorded GPU code (compiled_archs / io.imgtool.cuda-archs): whether it runs "
                          "on a " +
                          g.aliases.front() + " (compute capability " + g.cc +
                          ") is unknown, and a GPU it was not compiled for computes wrong results without an error; "
                          "--allow-unknown-archs accepts it" +
                          reported_kernels(c, g),
                      kArchsSource};
  std::string gap = kernel_gap(c.cuda_archs, g.cc);
  if (gap.empty()) return std::nullopt;
  return HostReject{
      c, "host-kernels",
      "Paddle " + c.paddle + "'s CUDA " + c.cuda + " build cannot serve a " + g.aliases.front() + ": " + gap,
      kArchsSource};
}

std::optional<HostReject> check_driver(const Cell& c, const Version& driver, const KnowledgeBase& kb) {
  DriverFloorRule f = driver_floor(c, kb);
  if (driver >= *Version::parse(f.driver)) return std::nullopt;
  return HostReject{c, "host-driver",
                    "CUDA " + c.cuda + " (Paddle " + c.paddle + ") needs driver >= " + f.driver + ", decided by " +
                        f.rule + "; host has " + driver.text +
                        " (\"CUDA driver version is insufficient for CUDA runtime version\")",
                    f.source};
}

HostFit fit(const Cell& c, const Version& driver, const GpuSpec& g) {
  HostFit f{c, !c.min_driver_full.empty() && driver >= *Version::parse(c.min_driver_full), ""};
  f.note = f.full_compat
               ? "driver >= " + c.min_driver_full + " (CUDA " + c.cuda + " toolkit driver): full compatibility"
               : "runs via CUDA minor-version compatibility (driver >= " + c.min_driver + "; toolkit driver " +
                     c.min_driver_full + "): PTX JIT of code newer than the driver is unavailable";
  f.kernels = c.cuda_archs.empty()
                  ? "GPU code UNKNOWN (no compiled_archs / io.imgtool.cuda-archs), accepted by --allow-unknown-archs: "
                    "check its results on the " +
                        g.aliases.front() + " (imgtool smoke) before trusting them"
                  : "GPU code " + c.cuda_archs + " runs on compute capability " + g.cc;
  return f;
}

}  // namespace

DriverFloorRule driver_floor(const Cell& c, const KnowledgeBase& kb) {
  const CudaRelease* cr = kb.cuda(c.cuda);
  DriverFloorRule nv{
      c.min_driver,
      "NVIDIA's minor-version compatibility floor for CUDA " + c.cuda + " (toolkit driver " + c.min_driver_full + ")",
      cr ? cr->source : ""};
  // One floor for every cell of a CUDA line: the strictest any Paddle release gives its builds for
  // that CUDA (a 3.1 cu129 build whose floor was never written down needs the driver 3.3's cu129
  // build names as much as 3.3 does: the CUDA runtime sets it, not the Paddle version).
  const PaddleGpuBuild* b = nullptr;
  std::string paddle;
  for (const PaddleRelease& r : kb.paddles())
    for (const PaddleGpuBuild& x : r.gpu)
      if (x.cuda == c.cuda && !x.min_driver.driver.empty() &&
          (!b || *Version::parse(x.min_driver.driver) > *Version::parse(b->min_driver.driver)))
        b = &x, paddle = r.series;
  if (!b) return nv;
  DriverFloorRule pd{b->min_driver.driver,
                     "Paddle's floor for its CUDA " + c.cuda + " builds (given for Paddle " + paddle +
                         ", held for every Paddle on CUDA " + c.cuda + "; stricter than NVIDIA's " + c.min_driver + ")",
                     b->min_driver.source};
  if (nv.driver.empty()) return pd;
  return *Version::parse(pd.driver) > *Version::parse(nv.driver) ? pd : nv;
}

bool better_fit(const HostFit& a, const HostFit& b) {
  auto pa = *Version::parse(a.cell.paddle), pb = *Version::parse(b.cell.paddle);
  if (pa != pb) return pa > pb;
  auto ca = *Version::parse(a.cell.cuda), cb = *Version::parse(b.cell.cuda);
  if (ca != cb) return ca > cb;
  if (a.full_compat != b.full_compat) return a.full_compat;
  return a.cell.tag < b.cell.tag;
}

HostResult query_host(const Plan& plan, const KnowledgeBase& kb, const HostQuery& q) {
  return query_host(plan.kept, kb, q);
}

HostResult query_host(const std::vector<Cell>& cells, const KnowledgeBase& kb, const HostQuery& q) {
  auto driver = Version::parse(q.driver);
  if (!driver) throw InputError("--host-driver: expected a driver version like 470.82.01, found '" + q.driver + "'");
  HostResult r;
  r.gpu = gpu_or_throw(kb, q.gpu, r.gpu_note);
  r.driver = q.driver;
  for (const Cell& c : cells) {
    if (c.variant != "gpu") {
      r.rejected.push_back(
          {c, "host-cpu", "CPU image: runs on any host but does not use the " + r.gpu.aliases.front(), ""});
      continue;
    }
    auto rej = check_arch(c, r.gpu, kb);
    if (!rej) rej = check_kernels(c, r.gpu, q.allow_unknown_archs);
    if (!rej) rej = check_driver(c, *driver, kb);
    if (rej)
      r.rejected.push_back(*rej);
    else
      r.fits.push_back(fit(c, *driver, r.gpu));
  }
  std::sort(r.fits.begin(), r.fits.end(), better_fit);
  return r;
}

}  // namespace imgtool::matrix
