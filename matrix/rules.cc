#include "matrix/rules.h"

#include <algorithm>

namespace imgtool::matrix {

namespace {

std::string axis(const RuleContext& c, const std::string& k) {
  auto it = c.combo.axes.find(k);
  return it == c.combo.axes.end() ? "" : it->second;
}
bool is_gpu(const RuleContext& c) { return axis(c, "variant") == "gpu"; }
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}
Verdict fail(const RuleContext& c, const char* rule, std::vector<std::string> axes, const std::string& fact,
             const std::string& source) {
  return {rule, describe_axes(c.combo.axes, axes) + ": " + fact, source};
}

std::optional<Verdict> python_range(const RuleContext& c) {
  auto py = Version::parse(axis(c, "python"));
  if (c.release.python.contains(*py)) return std::nullopt;
  return fail(c, "paddle-python", {"paddle", "python"},
              "Paddle " + c.release.series + " supports Python " + c.release.python.text(), c.release.source);
}

// The OS's package archive must provide the cell's Python (the template installs it with apt),
// unless the matrix says the base image already ships it (python_from: base).
std::optional<Verdict> os_python(const RuleContext& c) {
  if (c.combo.settings.get("python_from") == "base") return std::nullopt;
  std::string os = axis(c, "os"), py = axis(c, "python");
  const OsPython* o = c.kb.os_python(os);
  if (!o)
    return fail(c, "os-python", {"python", "os"},
                "the KB lists no Python packages for OS " + os +
                    " (kb/os.yaml); set python_from: base when the base image ships Python " + py,
                c.kb.dir() + "/os.yaml");
  if (o->provides(py)) return std::nullopt;
  return fail(c, "os-python", {"python", "os"},
              o->name + " packages Python " + join(o->python) + ", not " + py + " (apt-get install python" + py +
                  " fails); use one of those, or set python_from: base when the base image ships Python " + py,
              o->source);
}

std::optional<Verdict> paddle_cuda(const RuleContext& c) {
  std::string version = axis(c, "paddle");
  if (!is_gpu(c) || c.release.build_for(axis(c, "cuda"), version)) return std::nullopt;
  std::vector<std::string> cudas;
  for (auto& b : c.release.gpu)
    if (c.release.build_for(b.cuda, version) == &b) cudas.push_back(b.cuda);
  return fail(c, "paddle-cuda", {"paddle", "cuda"}, "Paddle " + version + " GPU wheels exist for CUDA " + join(cudas),
              c.release.source);
}

// A cudnn/trt axis must name what Paddle built this CUDA variant against (on the axis' precision).
std::optional<Verdict> build_component(const RuleContext& c, const char* rule, const std::string& key) {
  std::string want = axis(c, key);
  if (!is_gpu(c) || want.empty() || (key == "trt" && want == "none")) return std::nullopt;
  const PaddleGpuBuild* b = c.release.build_for(axis(c, "cuda"), axis(c, "paddle"));
  std::string built = key == "cudnn" ? b->cudnn : b->trt;
  if (!built.empty() && Version::parse(want)->is_prefix_of(*Version::parse(built))) return std::nullopt;
  std::string label = key == "cudnn" ? "cuDNN" : "TensorRT";
  std::string fact =
      built.empty() ? "Paddle " + c.release.series + " images for CUDA " + b->cuda + " ship no " + label
                    : "Paddle " + c.release.series + " for CUDA " + b->cuda + " is built with " + label + " " + built;
  return fail(c, rule, {"paddle", "cuda", key}, fact, b->source);
}
std::optional<Verdict> paddle_cudnn(const RuleContext& c) { return build_component(c, "paddle-cudnn", "cudnn"); }
std::optional<Verdict> paddle_trt(const RuleContext& c) { return build_component(c, "paddle-trt", "trt"); }

// A cell that claims TensorRT must install it (the nvidia/cuda bases ship none): the KB's
// trt_pip for this build, or the matrix's build.trt_pip_requirement.
std::optional<Verdict> paddle_trt_install(const RuleContext& c) {
  if (!is_gpu(c) || axis(c, "trt") == "none") return std::nullopt;
  const PaddleGpuBuild* b = c.release.build_for(axis(c, "cuda"), axis(c, "paddle"));
  auto own = c.combo.settings.build.find("trt_pip_requirement");
  if (b->trt.empty() || !b->trt_pip.requirement.empty() ||
      (own != c.combo.settings.build.end() && !own->second.empty()))
    return std::nullopt;
  return fail(c, "paddle-trt-install", {"paddle", "cuda", "trt"},
              "Paddle " + c.release.series + " for CUDA " + b->cuda + " is built with TensorRT " + b->trt +
                  ", but the KB has no pip install spec for it (trt_pip) and the nvidia/cuda bases ship no TensorRT; "
                  "add trt_pip to kb/paddle.yaml, or set build.trt_pip_requirement",
              b->source);
}

// cuDNN -> CUDA support. Only skips when the KB has facts for this cuDNN and
// none lists the CUDA; no facts at all is a warning (added when resolving).
std::optional<Verdict> cudnn_cuda(const RuleContext& c) {
  if (!is_gpu(c)) return std::nullopt;
  std::string cudnn =
      axis(c, "cudnn").empty() ? c.release.build_for(axis(c, "cuda"), axis(c, "paddle"))->cudnn : axis(c, "cudnn");
  auto facts = c.kb.cudnn_facts(cudnn);
  if (facts.empty()) return std::nullopt;
  auto cuda = Version::parse(axis(c, "cuda"));
  // From CUDA 12 on, a cuDNN built for a CUDA major runs on every minor of it.
  auto same_major = [&](const VersionRange& r) {
    return cuda->major() >= 12 && Version::parse(r.from)->major() <= cuda->major() &&
           cuda->major() <= Version::parse(r.to)->major();
  };
  for (auto* f : facts)
    for (auto& r : f->cuda)
      if (r.contains(*cuda) || same_major(r)) return std::nullopt;
  std::vector<std::string> ranges;
  for (auto& r : facts.front()->cuda) ranges.push_back(r.text());
  return fail(c, "cudnn-cuda", {"cuda"},
              "cuDNN " + facts.front()->cudnn.text() + " supports CUDA " + join(ranges) +
                  " (Paddle builds with cuDNN " + cudnn + ")",
              facts.front()->source);
}

// A GPU build whose wheel brings its own CUDA libraries starts from the OS's CPU base.
bool pip_build(const RuleContext& c) {
  const PaddleGpuBuild* b = is_gpu(c) ? c.release.build_for(axis(c, "cuda"), axis(c, "paddle")) : nullptr;
  return b && b->pip_cuda_libraries;
}

std::optional<Verdict> nvidia_cuda_os(const RuleContext& c) {
  std::string base = c.combo.settings.get("cuda_base");
  if (!is_gpu(c) || !c.combo.settings.get("base_image").empty() || base == "wheels" || base == "none" || pip_build(c))
    return std::nullopt;
  const CudaImages* img = c.kb.cuda_images(axis(c, "cuda"));
  if (!img)
    return fail(
        c, "nvidia-cuda-os", {"cuda"},
        "the KB lists no nvidia/cuda images for CUDA " + axis(c, "cuda") + " (set base_image to use another base)",
        c.kb.dir() + "/images.yaml");
  if (std::count(img->os.begin(), img->os.end(), axis(c, "os"))) return std::nullopt;
  return fail(c, "nvidia-cuda-os", {"cuda", "os"}, "nvidia/cuda:" + img->full + " images exist for " + join(img->os),
              img->source);
}

std::optional<Verdict> cpu_base_os(const RuleContext& c) {
  if ((is_gpu(c) && !pip_build(c)) || !c.combo.settings.get("base_image").empty() || c.kb.cpu_base(axis(c, "os")))
    return std::nullopt;
  std::vector<std::string> known;
  for (auto& b : c.kb.cpu_bases()) known.push_back(b.os);
  return fail(c, "cpu-base-os", {"variant", "os"},
              "CPU base images are known for " + join(known) + " (set base_image to use another)",
              c.kb.cpu_bases().empty() ? c.kb.dir() + "/images.yaml" : c.kb.cpu_bases().front().source);
}

}  // namespace

const std::vector<Rule>& combo_rules() {
  static const std::vector<Rule> rules = {
      {"paddle-python", "Python must be in the Paddle release's supported range", python_range},
      {"os-python", "the OS's archive must package the Python (or python_from: base)", os_python},
      {"paddle-cuda", "Paddle must publish GPU wheels for the CUDA version", paddle_cuda},
      {"paddle-cudnn", "a cudnn axis must match the cuDNN Paddle built against", paddle_cudnn},
      {"paddle-trt", "a trt axis must match the TensorRT of Paddle's images", paddle_trt},
      {"paddle-trt-install", "a cell that claims TensorRT must have a pip install spec for it", paddle_trt_install},
      {"cudnn-cuda", "the cuDNN release must support the CUDA version", cudnn_cuda},
      {"nvidia-cuda-os", "nvidia/cuda must publish an image for the CUDA version and OS", nvidia_cuda_os},
      {"cpu-base-os", "an OS base image must be known for the OS (CPU cells, and GPU wheels that bring their CUDA)",
       cpu_base_os},
  };
  return rules;
}

std::optional<Verdict> first_failure(const RuleContext& ctx) {
  for (auto& r : combo_rules())
    if (auto v = r.check(ctx)) return v;
  return std::nullopt;
}

namespace {

std::string major(const std::string& v) { return v.substr(0, v.find('.')); }

Verdict recipe_fail(const Cell& c, const RuleContext& ctx, const char* rule, const std::string& fact,
                    const std::string& source) {
  return {rule, describe_axes(ctx.combo.axes, {"paddle", "cuda", "cudnn"}) + ": " + fact, source};
}

std::optional<Verdict> recipe_base(const Cell& c, const RuleContext& ctx) {
  if (c.variant != "gpu" || c.cuda_base != "wheels" || c.pip_cuda_libraries) return std::nullopt;
  const CudaWheelBase* w = ctx.kb.cuda_wheels(c.cuda);
  if (!w) {
    std::vector<std::string> have;
    for (const auto& b : ctx.kb.cuda_wheel_bases()) have.push_back(b.cuda);
    return recipe_fail(
        c, ctx, "recipe-base",
        "cuda_base: wheels, but kb/cuda_wheels.yaml has no base for CUDA " + c.cuda + " (it has " + join(have) + ")",
        ctx.kb.dir() + "/cuda_wheels.yaml");
  }
  if (c.os != "debian12")
    return recipe_fail(c, ctx, "recipe-base",
                       "a wheel base is made on the local Debian 12 base (scripts/make-cuda-base.sh), not " + c.os,
                       w->source);
  return std::nullopt;
}

// The claimed cuDNN is the one the recipe puts in the image.
std::optional<Verdict> recipe_cudnn(const Cell& c, const RuleContext& ctx) {
  if (c.variant != "gpu" || c.cudnn.empty()) return std::nullopt;
  auto claim = Version::parse(c.cudnn);
  if (!c.cudnn_full.empty() && claim->is_prefix_of(*Version::parse(c.cudnn_full))) return std::nullopt;
  const CudaImages* img = ctx.kb.cuda_images(c.cuda);
  std::string base = c.cuda_base == "wheels" ? "the CUDA " + c.cuda + " wheel base ships cuDNN " + c.cudnn_full
                     : c.cuda_base == "none" ? "cuda_base: none ships no cuDNN"
                     : c.cudnn_full.empty()
                         ? "the KB does not know which cuDNN " + c.base_image + " ships (images.yaml cudnn_shipped)"
                         : c.base_image + " ships cuDNN " + c.cudnn_full;
  return recipe_fail(c, ctx, "recipe-cudnn",
                     "the cell claims cuDNN " + c.cudnn + ", but " + base +
                         " and NVIDIA's apt repository has no package of cuDNN " + c.cudnn + " for CUDA " + c.cuda +
                         " on " + c.os + " in the KB (cudnn.yaml apt); add that row, or claim what the base holds",
                     img ? img->source : ctx.kb.dir() + "/images.yaml");
}

// A wheel that pip-installs its own CUDA libraries must not find a second copy in the base.
std::optional<Verdict> installed_once(const Cell& c, const RuleContext& ctx) {
  if (c.variant != "gpu" || !c.pip_cuda_libraries || c.cuda_base == "none") return std::nullopt;
  return recipe_fail(
      c, ctx, "installed-once",
      "Paddle's wheel pip-installs its CUDA libraries (nvidia-* packages), and the base " + c.base_image +
          " ships them too: two cuDNNs in one image; build it on a base without CUDA libraries (cuda_base: none)",
      ctx.release.build_for(c.cuda, c.paddle)->source);
}

std::optional<Verdict> trt_cuda_major(const Cell& c, const RuleContext& ctx) {
  if (c.variant != "gpu" || c.trt.empty()) return std::nullopt;
  const PaddleGpuBuild* b = ctx.release.build_for(c.cuda, c.paddle);
  auto own = c.overrides.find("trt_pip_requirement");
  bool from_kb = own != c.overrides.end() && own->second == b->trt_pip.requirement;
  if (!from_kb || b->trt_pip.cuda_major.empty() || b->trt_pip.cuda_major == major(c.cuda)) return std::nullopt;
  return recipe_fail(c, ctx, "trt-cuda-major",
                     b->trt_pip.requirement + " is a CUDA " + b->trt_pip.cuda_major + " build of TensorRT " + c.trt +
                         "; the image's CUDA is " + c.cuda + " (its libnvinfer would need libcudart.so." +
                         b->trt_pip.cuda_major + ")",
                     b->trt_pip.source);
}

bool listed(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Where the recipe's copy of `lib` (as `so`) comes from, or "" when it ships none: Paddle's own pip
// requirements (a pip build), the wheel base's wheels, or the nvidia/cuda image's library set (its
// cuDNN: the one the cell claims, from the base or NVIDIA's apt package).
std::string provider(const Cell& c, const RuleContext& ctx, const PaddleLoads& loads, const NvidiaLibrary& lib,
                     const std::string& so) {
  std::string key = lib.keyed_by == "cudnn" ? major(c.cudnn) : major(c.cuda);
  if (c.pip_cuda_libraries) {
    auto pkg = lib.packages.find(key);
    return listed(loads.pip_provides, lib.lib) && pkg != lib.packages.end() ? "Paddle's pip requirement " + pkg->second
                                                                            : "";
  }
  if (c.cuda_base == "wheels") {
    const CudaWheelBase* w = ctx.kb.cuda_wheels(c.cuda);
    const CudaWheel* x = w ? w->wheel_providing(so) : nullptr;
    return x ? x->package + " " + x->version + " (the CUDA " + c.cuda + " wheel base)" : "";
  }
  if (lib.keyed_by == "cudnn") return c.cudnn_full.empty() ? "" : "cuDNN " + c.cudnn_full + " (" + c.cudnn_from + ")";
  const RuntimeSet* set = ctx.kb.runtime_set(major(c.cuda));
  return set && listed(set->libs, lib.lib) ? c.base_image : "";
}

// Every library Paddle requires resolves under the name it asks for: shipped by the recipe and,
// when asked for unversioned, linked (the links the template makes: Cell::dynload_links).
std::optional<Verdict> recipe_loads(const Cell& c, const RuleContext& ctx) {
  if (c.variant != "gpu") return std::nullopt;
  const PaddleLoads* loads = ctx.kb.paddle_loads(c.paddle, c.pip_cuda_libraries);
  if (!loads) return std::nullopt;  // no load table: the gate says so (loader.paddle)
  for (const auto& l : loads->libs) {
    const NvidiaLibrary& lib = *ctx.kb.library(l.lib);
    std::string so = cell_soname(c, lib);
    if (l.need != "required" || so.empty()) continue;
    std::string name = dlopens_unversioned(*loads, l.lib) ? lib.unversioned() : so;
    std::string from = provider(c, ctx, *loads, lib, so);
    if (from.empty())
      return recipe_fail(c, ctx, "recipe-loads",
                         "Paddle " + c.paddle + " dlopens " + name + " (" + l.feature + "), and the recipe ships no " +
                             so + ": loader." + l.lib + " would fail at the gate",
                         loads->source);
    if (name != so && !listed(c.dynload_links, name + "=" + so))
      return recipe_fail(c, ctx, "recipe-loads",
                         "Paddle " + c.paddle + " dlopens " + name + " (" + l.feature + "); the recipe ships " + so +
                             " (" + from + ") but links no " + name + " to it: loader." + l.lib +
                             " would fail at the gate",
                         loads->source);
  }
  return std::nullopt;
}

// TensorRT from pip needs an index that serves the real wheel: PyPI's `tensorrt…` packages are
// wheel-stub sdists that download it from NVIDIA's index while the image builds. The matrix names
// that index (tensorrt_index, or build.trt_pip_index_url); without one the cell cannot build.
std::optional<Verdict> trt_index(const Cell& c, const RuleContext& ctx) {
  if (c.variant != "gpu" || c.trt.empty() || !c.overrides.count("trt_pip_requirement")) return std::nullopt;
  const PaddleGpuBuild* b = ctx.release.build_for(c.cuda, c.paddle);
  if (!ctx.combo.settings.get("tensorrt_index").empty() || ctx.combo.settings.build.count("trt_pip_index_url") ||
      (b && !b->trt_pip.index_url.empty()))  // NVIDIA's NGC index (the KB's row) serves real wheels
    return std::nullopt;
  return recipe_fail(c, ctx, "trt-index",
                     "TensorRT " + c.trt + " is installed with pip (" + c.overrides.at("trt_pip_requirement") +
                         "), and no TensorRT index is given: PyPI's TensorRT packages are wheel-stub sdists that "
                         "download the real wheel from NVIDIA's index (pypi.nvidia.com) while the image builds; "
                         "set tensorrt_index: URL (NVIDIA's index, or a mirror of it) in the matrix, or trt: none",
                     b ? b->trt_pip.source : ctx.kb.dir() + "/paddle.yaml");
}

}  // namespace

const std::vector<RecipeRule>& recipe_rules() {
  static const std::vector<RecipeRule> rules = {
      {"recipe-base", "the CUDA base the cell names exists (a wheel base: kb/cuda_wheels.yaml, on Debian 12)",
       recipe_base},
      {"recipe-cudnn", "the claimed cuDNN is what the base ships, NVIDIA's apt package, or Paddle's pip pin",
       recipe_cudnn},
      {"installed-once", "a wheel that brings its own CUDA libraries gets a base with none", installed_once},
      {"trt-cuda-major", "the TensorRT wheel is built for the cell's CUDA major", trt_cuda_major},
      {"recipe-loads", "every library Paddle requires resolves under the name it dlopens (shipped, and linked)",
       recipe_loads},
      {"trt-index", "a pip-installed TensorRT has an index serving the real wheel (tensorrt_index)", trt_index},
  };
  return rules;
}

std::optional<Verdict> first_recipe_failure(const Cell& cell, const RuleContext& ctx) {
  for (const auto& r : recipe_rules())
    if (auto v = r.check(cell, ctx)) return v;
  return std::nullopt;
}

std::optional<Verdict> published_rule(const Cell& cell, const RuleContext& c, bool& unconfirmed) {
  unconfirmed = false;
  auto has = [&](const std::vector<std::string>& tags) {
    return std::any_of(tags.begin(), tags.end(), [&](std::string t) {
      if (auto p = t.find("{version}"); p != std::string::npos) t.replace(p, 9, cell.paddle);
      return t == cell.tag;
    });
  };
  if (has(c.release.published)) return std::nullopt;
  if (has(c.release.published_unconfirmed)) {
    unconfirmed = true;
    return std::nullopt;
  }
  std::vector<std::string> tags;
  for (auto t : c.release.published) {
    if (auto p = t.find("{version}"); p != std::string::npos) t.replace(p, 9, cell.paddle);
    tags.push_back(t);
  }
  return Verdict{"published",
                 describe_axes(c.combo.axes, {"paddle", "variant", "cuda"}) + ": tag " + cell.tag +
                     " is not among Paddle " + c.release.series + "'s published images (" + join(tags) + ")",
                 c.release.published_fact.source.empty() ? c.release.source : c.release.published_fact.source};
}

}  // namespace imgtool::matrix
