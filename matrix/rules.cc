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
                "the KB lists no Python packages for OS " + os + " (kb/os.yaml); set python_from: base when the base image ships Python " + py,
                c.kb.dir() + "/os.yaml");
  if (o->provides(py)) return std::nullopt;
  return fail(c, "os-python", {"python", "os"},
              o->name + " packages Python " + join(o->python) + ", not " + py +
                  " (apt-get install python" + py + " fails); use one of those, or set python_from: base when the base image ships Python " + py,
              o->source);
}

std::optional<Verdict> paddle_cuda(const RuleContext& c) {
  if (!is_gpu(c) || c.release.build_for(axis(c, "cuda"), axis(c, "paddle"))) return std::nullopt;
  std::vector<std::string> cudas;
  for (auto& b : c.release.gpu) cudas.push_back(b.cuda);
  return fail(c, "paddle-cuda", {"paddle", "cuda"},
              "Paddle " + c.release.series + " GPU wheels exist for CUDA " + join(cudas), c.release.source);
}

// A cudnn/trt axis must name what Paddle built this CUDA variant against (on the axis' precision).
std::optional<Verdict> build_component(const RuleContext& c, const char* rule, const std::string& key) {
  std::string want = axis(c, key);
  if (!is_gpu(c) || want.empty() || (key == "trt" && want == "none")) return std::nullopt;
  const PaddleGpuBuild* b = c.release.build_for(axis(c, "cuda"), axis(c, "paddle"));
  std::string built = key == "cudnn" ? b->cudnn : b->trt;
  if (!built.empty() && Version::parse(want)->is_prefix_of(*Version::parse(built))) return std::nullopt;
  std::string label = key == "cudnn" ? "cuDNN" : "TensorRT";
  std::string fact = built.empty() ? "Paddle " + c.release.series + " images for CUDA " + b->cuda + " ship no " + label
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
  if (b->trt.empty() || !b->trt_pip.requirement.empty() || (own != c.combo.settings.build.end() && !own->second.empty()))
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
  std::string cudnn = axis(c, "cudnn").empty() ? c.release.build_for(axis(c, "cuda"), axis(c, "paddle"))->cudnn : axis(c, "cudnn");
  auto facts = c.kb.cudnn_facts(cudnn);
  if (facts.empty()) return std::nullopt;
  auto cuda = Version::parse(axis(c, "cuda"));
  for (auto* f : facts)
    for (auto& r : f->cuda)
      if (r.contains(*cuda)) return std::nullopt;
  std::vector<std::string> ranges;
  for (auto& r : facts.front()->cuda) ranges.push_back(r.text());
  return fail(c, "cudnn-cuda", {"cuda"}, "cuDNN " + facts.front()->cudnn.text() + " supports CUDA " + join(ranges) + " (Paddle builds with cuDNN " + cudnn + ")",
              facts.front()->source);
}

std::optional<Verdict> nvidia_cuda_os(const RuleContext& c) {
  if (!is_gpu(c) || !c.combo.settings.get("base_image").empty()) return std::nullopt;
  const CudaImages* img = c.kb.cuda_images(axis(c, "cuda"));
  if (!img)
    return fail(c, "nvidia-cuda-os", {"cuda"}, "the KB lists no nvidia/cuda images for CUDA " + axis(c, "cuda") +
                " (set base_image to use another base)", c.kb.dir() + "/images.yaml");
  if (std::count(img->os.begin(), img->os.end(), axis(c, "os"))) return std::nullopt;
  return fail(c, "nvidia-cuda-os", {"cuda", "os"}, "nvidia/cuda:" + img->full + " images exist for " + join(img->os), img->source);
}

std::optional<Verdict> cpu_base_os(const RuleContext& c) {
  if (is_gpu(c) || !c.combo.settings.get("base_image").empty() || c.kb.cpu_base(axis(c, "os"))) return std::nullopt;
  std::vector<std::string> known;
  for (auto& b : c.kb.cpu_bases()) known.push_back(b.os);
  return fail(c, "cpu-base-os", {"variant", "os"}, "CPU base images are known for " + join(known) + " (set base_image to use another)",
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
      {"cpu-base-os", "a CPU base image must be known for the OS", cpu_base_os},
  };
  return rules;
}

std::optional<Verdict> first_failure(const RuleContext& ctx) {
  for (auto& r : combo_rules())
    if (auto v = r.check(ctx)) return v;
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
  return Verdict{"published", describe_axes(c.combo.axes, {"paddle", "variant", "cuda"}) + ": tag " + cell.tag +
                 " is not among Paddle " + c.release.series + "'s published images (" + join(tags) + ")",
                 c.release.published_fact.source.empty() ? c.release.source : c.release.published_fact.source};
}

}  // namespace imgtool::matrix
