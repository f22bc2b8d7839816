#include "verify/claims_check.h"

#include <optional>
#include <string_view>

#include "core/strings.h"
#include "core/version.h"

namespace imgtool::verify {

namespace {

using Checks = std::vector<CheckResult>;

CheckResult pass(std::string id, std::string title, std::string expected, std::string found) {
  return {std::move(id), std::move(title), Status::kPass, std::move(expected), std::move(found), ""};
}
CheckResult fail(std::string id, std::string title, std::string expected, std::string found, std::string fix) {
  return {std::move(id), std::move(title), Status::kFail, std::move(expected), std::move(found), std::move(fix)};
}
CheckResult skip(std::string id, std::string title, std::string why) {
  return {std::move(id), std::move(title), Status::kSkip, "-", std::move(why), ""};
}
CheckResult judge(bool ok, std::string id, std::string title, std::string expected, std::string found,
                  std::string fix) {
  return ok ? pass(id, title, expected, found) : fail(id, title, expected, found, fix);
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s.empty() ? "none" : s;
}

std::string major_of(const std::string& v) { return v.substr(0, v.find('.')); }

void check_labels(const Claims& c, Checks& out) {
  std::vector<std::string> need = {"paddle", "python", "variant"};
  if (c.gpu()) need.insert(need.end(), {"cuda", "cudnn", "min-driver"});
  std::vector<std::string> missing;
  for (const auto& f : need)
    if (c.label(f).empty()) missing.push_back("io.imgtool." + f);
  out.push_back(judge(missing.empty(), "claims.labels", "required io.imgtool.* labels present", "labels " + join(need),
                      missing.empty() ? "all present" : "missing " + join(missing),
                      "regenerate the Dockerfile with `imgtool generate` (it writes these labels) and rebuild"));
  std::string v = c.label("variant");
  if (!v.empty() && v != "gpu" && v != "cpu")
    out.push_back(fail("claims.variant", "variant label is gpu or cpu", "gpu or cpu", "'" + v + "'",
                       "fix io.imgtool.variant in the matrix/template"));
}

void check_tag(const Claims& c, Checks& out) {
  if (c.from_tag.empty()) {
    out.push_back(skip("claims.tag", "tag name agrees with labels", "tag '" + c.tag + "' encodes no claims"));
    return;
  }
  std::vector<std::string> bad, ok;
  for (const auto& [f, v] : c.from_tag) {
    std::string l = c.label(f);
    bool same = f == "variant" ? l == v : (!l.empty() && (version_matches(v, l) || version_matches(l, v)));
    (same ? ok : bad).push_back(f + ": tag " + v + " vs label " + (l.empty() ? "(none)" : l));
  }
  out.push_back(judge(bad.empty(), "claims.tag", "tag name agrees with labels",
                      "tag '" + c.tag + "' and labels to agree", bad.empty() ? join(ok, "; ") : join(bad, "; "),
                      "the tag or the labels are stale: regenerate and rebuild, or push under the right tag"));
}

void check_python(const Claims& c, const scan::ContentsFacts& f, Checks& out) {
  std::string claim = c.label("python");
  if (claim.empty()) claim = c.from_tag.count("python") ? c.from_tag.at("python") : "";
  std::string found =
      "python " + join(f.pythons) + (f.venv_pythons.empty() ? "" : " (venv " + join(f.venv_pythons) + ")");
  if (claim.empty()) return out.push_back(skip("claims.python", "Python version", "no python claim; " + found));
  bool installed = false;
  for (const auto& p : f.pythons) installed |= version_matches(claim, p);
  for (const auto& p : f.venv_pythons) installed |= version_matches(claim, p);
  std::string paddle_py = f.paddles.size() == 1 ? f.paddles[0].python : "";
  bool paddle_ok = paddle_py.empty() || version_matches(claim, paddle_py);
  out.push_back(
      judge(installed && paddle_ok, "claims.python", "Python version",
            "Python " + claim + " installed" + (paddle_py.empty() ? "" : " with Paddle in its site-packages"),
            found + (paddle_py.empty() ? "" : "; paddle installed for python " + paddle_py),
            "build from a base with Python " + claim + " (matrix python / base image), or fix io.imgtool.python"));
}

void check_paddle(const Claims& c, const scan::ContentsFacts& f, Checks& out) {
  std::vector<std::string> seen;
  for (const auto& d : f.paddles) seen.push_back(d.name + " " + d.version + " at " + d.location);
  if (f.paddles.size() != 1) {
    out.push_back(fail(
        "claims.paddle", "one paddlepaddle distribution", "exactly one paddlepaddle* distribution", join(seen, "; "),
        f.paddles.empty() ? "the pip install of paddlepaddle failed or went to another prefix; check the build log"
                          : "both CPU and GPU wheels got installed; install only one (pip uninstall the other)"));
    return;
  }
  const scan::PaddleDist& d = f.paddles[0];
  std::string claim = c.label("paddle");
  if (!claim.empty())
    out.push_back(judge(version_matches(claim, d.version), "claims.paddle", "Paddle version", "paddlepaddle " + claim,
                        d.name + " " + d.version,
                        "pin paddlepaddle==" + claim + " in the build, or fix io.imgtool.paddle"));
  std::string variant = c.label("variant");
  if (variant.empty()) return;
  std::string built = d.gpu ? "gpu" : "cpu";
  out.push_back(judge(built == variant, "claims.build", "Paddle build matches variant", variant + " build of Paddle",
                      built + " build (" + d.gpu_evidence + ")",
                      variant == "gpu" ? "install the GPU wheel (paddlepaddle-gpu, from the CUDA-specific index) "
                                       : "install the CPU wheel (paddlepaddle), or label the image gpu"));
  if (variant == "gpu" && !d.compiled_cuda.empty() && !c.label("cuda").empty())
    out.push_back(
        judge(version_matches(c.label("cuda"), d.compiled_cuda) || version_matches(d.compiled_cuda, c.label("cuda")),
              "claims.paddle-cuda", "Paddle compiled for the claimed CUDA", "Paddle built for CUDA " + c.label("cuda"),
              "built for CUDA " + d.compiled_cuda,
              "install the Paddle wheel built for CUDA " + c.label("cuda") + " (its cuXY index)"));
}

void check_lib(const Claims& c, const scan::ContentsFacts& f, const std::string& lib, const std::string& claim,
               const std::string& title, const std::string& fix, Checks& out) {
  const scan::LibFacts& l = f.lib(lib);
  std::string found = l.present() ? lib + " " + l.version + " (" + l.paths.front() + ")" : "no " + lib + " library";
  out.push_back(judge(l.present() && (claim.empty() || version_matches(claim, l.version) ||
                                      (Version::parse(l.version) && Version::parse(l.version)->parts.size() == 1 &&
                                       major_of(claim) == l.version)),
                      "contents." + lib, title, lib + (claim.empty() ? "" : " " + claim) + " present", found, fix));
}

void check_gpu_libs(const Claims& c, const scan::ContentsFacts& f, Checks& out) {
  if (!c.gpu()) {
    const scan::LibFacts& rt = f.lib("cudart");
    if (rt.present())
      out.push_back({"contents.cuda", "no CUDA runtime in a cpu image", Status::kWarn, "no CUDA libraries",
                     "cudart " + rt.version + " at " + rt.paths.front(), "build cpu images from a non-CUDA base"});
    return;
  }
  std::string cuda = c.label("cuda"), cudnn = c.label("cudnn");
  check_lib(c, f, "cudart", cuda, "CUDA runtime matches the cuda claim",
            "build FROM the CUDA " + cuda + " base (runtime/cudnn flavor) or install nvidia-cuda-runtime for " + cuda,
            out);
  check_lib(c, f, "cublas", cuda.empty() ? "" : major_of(cuda), "cuBLAS present for the CUDA major",
            "use a CUDA runtime base (not base) or install nvidia-cublas for CUDA " + cuda, out);
  check_lib(c, f, "cudnn", cudnn, "cuDNN matches the cudnn claim",
            "use the cudnn flavor of the CUDA base or install nvidia-cudnn " + cudnn, out);
}

void check_cudnn_link(const Claims& c, const scan::ContentsFacts& f, Checks& out) {
  if (!c.gpu()) return;
  std::vector<std::string> dangling, good;
  for (const auto& l : f.cudnn_links)
    (l.resolved.empty() ? dangling : good).push_back(l.path + (l.resolved.empty() ? "" : " -> " + l.resolved));
  bool pip_layout = false;
  for (const auto& p : f.lib("cudnn").paths) pip_layout |= p.find("/nvidia/cudnn/") != std::string::npos;
  bool ok = dangling.empty() && (!good.empty() || pip_layout);
  std::string found = !dangling.empty() ? "dangling " + join(dangling)
                      : !good.empty()   ? join(good)
                      : pip_layout      ? "pip layout (site-packages/nvidia/cudnn/lib), no unversioned link needed"
                                        : "no libcudnn.so";
  out.push_back(judge(ok, "contents.cudnn-link", "libcudnn.so resolves",
                      "libcudnn.so resolving to a file (Paddle dlopens it)", found,
                      "add `ln -s libcudnn.so.<major> libcudnn.so` next to the library, or fix the broken link"));
}

void check_tensorrt(const Claims& c, const scan::ContentsFacts& f, Checks& out) {
  std::string trt = c.label("tensorrt");
  if (trt.empty()) return;
  check_lib(c, f, "tensorrt", trt, "TensorRT matches the tensorrt claim",
            "install TensorRT " + trt + " (tensorrt wheel or libnvinfer), or drop the trt claim", out);
}

// The version after the first "cuda>=" in NVIDIA_REQUIRE_CUDA (digits in dot-separated groups, as
// cuda>=(\d+(?:\.\d+)*) would take it); "" when there is none. Plain string code: the value comes
// from the image's config (std::regex recursed per character on a long one).
std::string required_cuda(std::string_view env) {
  size_t at = env.find("cuda>=");
  if (at == std::string_view::npos) return "";
  std::string_view v = env.substr(at + 6);
  auto digits = [&](size_t from) {
    size_t i = from;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
    return i;
  };
  size_t end = digits(0);
  while (end > 0 && end + 1 < v.size() && v[end] == '.') {
    size_t next = digits(end + 1);
    if (next == end + 1) break;  // a dot with no digits after it ends the version
    end = next;
  }
  return std::string(v.substr(0, end));
}

void check_env(const Claims& c, Checks& out) {
  std::string found = c.require_cuda.empty() ? "unset" : "'" + c.require_cuda + "'";
  if (!c.gpu()) {
    out.push_back(judge(c.require_cuda.empty(), "claims.require-cuda", "NVIDIA_REQUIRE_CUDA unset for cpu",
                        "NVIDIA_REQUIRE_CUDA unset", found,
                        "build cpu images from a non-CUDA base (or clear the ENV)"));
    return;
  }
  std::string cuda = c.label("cuda");
  std::string required = required_cuda(c.require_cuda);
  auto want = Version::parse(cuda);
  auto got = required.empty() ? std::nullopt : Version::parse(required);
  bool ok = want && got && got->truncated(2) == want->truncated(2);
  out.push_back(judge(ok, "claims.require-cuda", "NVIDIA_REQUIRE_CUDA matches the cuda claim",
                      "NVIDIA_REQUIRE_CUDA with cuda>=" + (cuda.empty() ? "<cuda>" : cuda), found,
                      "set ENV NVIDIA_REQUIRE_CUDA=\"cuda>=" + cuda + "\" (the generator's template does)"));
}

// Minimum driver under CUDA minor-version compatibility for a CUDA major: the
// lowest min_driver_compat the knowledge base (matrix/kb/cuda.yaml) lists for
// that major; nullopt when it lists none.
std::optional<Version> driver_floor(const matrix::KnowledgeBase& kb, int major) {
  std::optional<Version> floor;
  for (const auto& r : kb.cudas()) {
    auto v = Version::parse(r.cuda);
    auto d = Version::parse(r.min_driver_compat);
    if (v && d && v->major() == major && (!floor || *d < *floor)) floor = d;
  }
  return floor;
}

void check_driver(const Claims& c, const matrix::KnowledgeBase& kb, Checks& out) {
  if (!c.gpu()) return;
  auto cuda = Version::parse(c.label("cuda"));
  auto drv = Version::parse(c.label("min-driver"));
  auto floor = cuda ? driver_floor(kb, cuda->major()) : std::nullopt;
  if (!cuda || !drv || !floor) {
    out.push_back(skip("claims.min-driver", "min-driver is plausible", "no usable cuda/min-driver labels"));
    return;
  }
  out.push_back(judge(*drv >= *floor, "claims.min-driver", "min-driver is plausible",
                      ">= " + floor->text + " (CUDA " + std::to_string(cuda->major()) + ".x floor)",
                      c.label("min-driver"), "take min-driver from matrix/kb/cuda.yaml for CUDA " + c.label("cuda")));
}

// The NVIDIA runtime mounts the driver's libcuda.so only for the `compute` capability
// (nvidia-container-toolkit: unset or empty = its default "utility,compute").
void check_capabilities(const Claims& c, Checks& out) {
  if (!c.gpu()) return;
  auto it = c.env.find("NVIDIA_DRIVER_CAPABILITIES");
  std::string v = it == c.env.end() ? "" : it->second;
  std::string found =
      v.empty() ? std::string(it == c.env.end() ? "unset" : "empty") + ": the runtime's default utility,compute"
                : "NVIDIA_DRIVER_CAPABILITIES=" + v;
  bool compute = v.empty();
  size_t start = 0;
  while (!compute && start <= v.size()) {
    size_t comma = v.find(',', start);
    std::string cap = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    compute = cap == "compute" || cap == "all";
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  out.push_back(judge(compute, "env.driver-capabilities", "the NVIDIA runtime mounts libcuda (compute capability)",
                      "NVIDIA_DRIVER_CAPABILITIES with compute (or all)",
                      compute ? found
                              : found + ": docker run --gpus mounts no libcuda.so, and Paddle says "
                                        "\"CUDA driver version is insufficient\"",
                      "set ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility"));
}

// NVIDIA_REQUIRE_CUDA's terms ("cuda>=12.6 driver>=550.54.14": a space means or). A term with a
// brand= condition is NVIDIA's forward compatibility on datacenter GPUs (brand=tesla,driver>=470,
// driver<471: the image's cuda-compat libcuda serves the newer runtime there); it is not a floor.
struct Requirement {
  std::string cuda, driver;
  bool brand = false;
};
std::vector<Requirement> requirements(const std::string& env) {
  std::vector<Requirement> out;
  size_t start = 0;
  while (start < env.size()) {
    size_t sp = env.find(' ', start);
    std::string term = env.substr(start, sp == std::string::npos ? std::string::npos : sp - start);
    start = sp == std::string::npos ? env.size() : sp + 1;
    Requirement r;
    size_t i = 0;
    while (i < term.size()) {  // comma-separated conditions of one term are ANDed
      size_t comma = term.find(',', i);
      std::string cond = term.substr(i, comma == std::string::npos ? std::string::npos : comma - i);
      i = comma == std::string::npos ? term.size() : comma + 1;
      if (cond.rfind("cuda>=", 0) == 0) r.cuda = required_cuda(cond);
      if (cond.rfind("driver>=", 0) == 0) r.driver = cond.substr(8);
      if (cond.rfind("brand=", 0) == 0) r.brand = true;
    }
    if (!r.brand && (!r.cuda.empty() || !r.driver.empty())) out.push_back(r);
  }
  return out;
}

// The lowest driver a requirement term admits: its driver>= bound, or the first driver of the CUDA
// its cuda>= names (the toolkit accepts a driver whose CUDA version is at least that).
std::optional<Version> admitted_floor(const Requirement& r, const matrix::KnowledgeBase& kb) {
  std::optional<Version> d = r.driver.empty() ? std::nullopt : Version::parse(r.driver);
  if (!r.cuda.empty())
    if (const matrix::CudaRelease* cr = kb.cuda(r.cuda); cr && !cr->min_driver_full.empty()) {
      auto full = Version::parse(cr->min_driver_full);
      if (full && (!d || *full > *d)) d = full;  // both must hold within one term
    }
  return d;
}

// The CUDA runtime the image brings (Paddle's own, linked statically in 2.x builds, or libcudart)
// needs a driver of at least its major's minor-version floor; no driver the image's requirement or
// its min-driver label admits may be below that.
void check_runtime_floor(const Claims& c, const scan::ContentsFacts& f, const matrix::KnowledgeBase& kb, Checks& out) {
  if (!c.gpu()) return;
  std::string runtime = f.paddles.size() == 1 && !f.paddles[0].compiled_cuda.empty() ? f.paddles[0].compiled_cuda
                                                                                     : f.lib("cudart").version;
  const matrix::CudaRelease* cr = runtime.empty() ? nullptr : kb.cuda(runtime);
  auto floor = cr ? Version::parse(cr->min_driver_compat) : std::nullopt;
  if (!floor) {
    out.push_back(
        skip("env.runtime-floor", "drivers admitted can run the CUDA runtime", "no CUDA runtime version found"));
    return;
  }
  std::vector<std::string> low;
  for (const auto& r : requirements(c.require_cuda))
    if (auto d = admitted_floor(r, kb); d && *d < *floor)
      low.push_back("NVIDIA_REQUIRE_CUDA admits driver " + d->text + (r.cuda.empty() ? "" : " (cuda>=" + r.cuda + ")"));
  if (auto l = Version::parse(c.label("min-driver")); l && *l < *floor)
    low.push_back("io.imgtool.min-driver " + l->text);
  out.push_back(judge(
      low.empty(), "env.runtime-floor", "drivers admitted can run the CUDA runtime",
      "no driver below " + floor->text + " admitted (the minor-version floor of the CUDA " + runtime + " runtime)",
      low.empty() ? "'" + c.require_cuda + "', min-driver " + c.label("min-driver") : strings::join(low, "; "),
      "set ENV NVIDIA_REQUIRE_CUDA=\"cuda>=" + Version::parse(runtime)->truncated(2) + " driver>=" + floor->text +
          "\" and io.imgtool.min-driver >= " + floor->text + " (the generator's template does)"));
}

// io.imgtool.cuda-archs against the GPU code actually compiled into Paddle's libraries.
void check_archs(const Claims& c, const scan::ContentsFacts& f, Checks& out) {
  if (!c.gpu() || f.paddles.size() != 1 || f.paddles[0].code_libraries.empty()) return;
  const scan::PaddleDist& d = f.paddles[0];
  std::string held = d.gpu_code.text(), claim = c.label("cuda-archs");
  std::string found = held.empty() ? "no GPU code in " + strings::join(d.code_libraries, ", ")
                                   : held + " (" + std::to_string(d.gpu_code.containers) + " fat binaries in " +
                                         strings::join(d.code_libraries, ", ") + ")";
  if (claim.empty()) {
    out.push_back({"contents.cuda-archs", "the GPU architectures are claimed", Status::kWarn, "io.imgtool.cuda-archs",
                   found, "regenerate the image (the KB's compiled_archs for this build, `imgtool kb derive WHEEL`)"});
    return;
  }
  out.push_back(
      judge(claim == held, "contents.cuda-archs", "GPU architectures compiled into Paddle match the claim",
            "io.imgtool.cuda-archs " + claim, found,
            "fix compiled_archs in matrix/kb/paddle.yaml from `imgtool kb derive` of the wheel, and rebuild"));
}

}  // namespace

bool version_matches(const std::string& claim, const std::string& found) {
  if (claim.empty()) return true;
  if (found.compare(0, claim.size(), claim) != 0) return false;
  if (found.size() == claim.size()) return true;
  return found[claim.size()] == '.' && found.find_first_not_of("0123456789.", claim.size()) == std::string::npos;
}

std::vector<CheckResult> check_claims(const Claims& c, const scan::ContentsFacts& f, const matrix::KnowledgeBase& kb) {
  Checks out;
  check_labels(c, out);
  check_tag(c, out);
  check_python(c, f, out);
  check_paddle(c, f, out);
  check_gpu_libs(c, f, out);
  check_cudnn_link(c, f, out);
  check_tensorrt(c, f, out);
  check_env(c, out);
  check_driver(c, kb, out);
  check_capabilities(c, out);
  check_runtime_floor(c, f, kb, out);
  check_archs(c, f, out);
  return out;
}

}  // namespace imgtool::verify
