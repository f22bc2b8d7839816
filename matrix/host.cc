#include "matrix/host.h"

#include <algorithm>

#include "core/error.h"

namespace imgtool::matrix {

namespace {

const GpuSpec& gpu_or_throw(const KnowledgeBase& kb, const std::string& name) {
  if (const GpuSpec* g = kb.find_gpu(name)) return *g;
  std::string known;
  for (auto& g : kb.gpus()) known += (known.empty() ? "" : ", ") + g.aliases.front();
  throw InputError("--gpu: expected a GPU listed in the knowledge base (" + known + "), found '" + name + "'");
}

// Empty when the GPU's architecture can run images of this CUDA version.
std::optional<HostReject> check_arch(const Cell& c, const GpuSpec& g, const KnowledgeBase& kb) {
  const ArchSupport* a = kb.arch_for_cc(g.cc);
  if (!a) return HostReject{c, "host-arch", "the KB has no architecture fact for compute capability " + g.cc, kb.dir() + "/arch.yaml"};
  auto cuda = *Version::parse(c.cuda);
  std::string span = "CUDA " + a->first_cuda + (a->last_cuda.empty() ? "+" : " to " + a->last_cuda);
  if (cuda < *Version::parse(a->first_cuda) || (!a->last_cuda.empty() && cuda > *Version::parse(a->last_cuda)))
    return HostReject{c, "host-arch", "CUDA " + c.cuda + " cannot serve a " + g.aliases.front() + ": " + a->name + " (compute capability " +
                      g.cc + ") is supported by " + span, a->source};
  return std::nullopt;
}

std::optional<HostReject> check_driver(const Cell& c, const Version& driver, const KnowledgeBase& kb) {
  if (driver >= *Version::parse(c.min_driver)) return std::nullopt;
  const CudaRelease* cr = kb.cuda(c.cuda);
  return HostReject{c, "host-driver", "CUDA " + c.cuda + " needs driver >= " + c.min_driver + " (minor-version compatibility; >= " +
                    c.min_driver_full + " for the toolkit's own driver), host has " + driver.text +
                    " (\"CUDA driver version is insufficient for CUDA runtime version\")", cr ? cr->source : ""};
}

HostFit fit(const Cell& c, const Version& driver) {
  HostFit f{c, driver >= *Version::parse(c.min_driver_full), ""};
  f.note = f.full_compat ? "driver >= " + c.min_driver_full + " (CUDA " + c.cuda + " toolkit driver): full compatibility"
                         : "runs via CUDA minor-version compatibility (driver >= " + c.min_driver + "; toolkit driver " + c.min_driver_full +
                               "): PTX JIT of code newer than the driver is unavailable";
  return f;
}

bool better(const HostFit& a, const HostFit& b) {
  auto pa = *Version::parse(a.cell.paddle), pb = *Version::parse(b.cell.paddle);
  if (pa != pb) return pa > pb;
  auto ca = *Version::parse(a.cell.cuda), cb = *Version::parse(b.cell.cuda);
  if (ca != cb) return ca > cb;
  if (a.full_compat != b.full_compat) return a.full_compat;
  return a.cell.tag < b.cell.tag;
}

}  // namespace

HostResult query_host(const Plan& plan, const KnowledgeBase& kb, const HostQuery& q) {
  auto driver = Version::parse(q.driver);
  if (!driver) throw InputError("--host-driver: expected a driver version like 470.82.01, found '" + q.driver + "'");
  HostResult r{gpu_or_throw(kb, q.gpu), q.driver, {}, {}};
  for (const Cell& c : plan.kept) {
    if (c.variant != "gpu") {
      r.rejected.push_back({c, "host-cpu", "CPU image: runs on any host but does not use the " + r.gpu.aliases.front(), ""});
      continue;
    }
    auto rej = check_arch(c, r.gpu, kb);
    if (!rej) rej = check_driver(c, *driver, kb);
    if (rej) r.rejected.push_back(*rej);
    else r.fits.push_back(fit(c, *driver));
  }
  std::sort(r.fits.begin(), r.fits.end(), better);
  return r;
}

}  // namespace imgtool::matrix
