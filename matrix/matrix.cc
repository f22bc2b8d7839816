#include "matrix/matrix.h"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "core/error.h"
#include "core/strings.h"
#include "matrix/expand.h"
#include "matrix/matrix_file.h"
#include "matrix/rules.h"
#include "matrix/tag_template.h"

namespace imgtool::matrix {

namespace {

std::string today_iso() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

// A real calendar date "YYYY-MM-DD" (2026-02-30 is not), else InputError naming the field.
std::string checked_today(const std::string& today) {
  auto digits = [&](size_t from, size_t n) {
    for (size_t i = from; i < from + n; ++i)
      if (today[i] < '0' || today[i] > '9') return false;
    return true;
  };
  bool shape = today.size() == 10 && digits(0, 4) && today[4] == '-' && digits(5, 2) && today[7] == '-' && digits(8, 2);
  if (shape) {
    std::chrono::year_month_day d{std::chrono::year{std::stoi(today.substr(0, 4))},
                                  std::chrono::month{static_cast<unsigned>(std::stoi(today.substr(5, 2)))},
                                  std::chrono::day{static_cast<unsigned>(std::stoi(today.substr(8, 2)))}};
    if (d.ok()) return today;
  }
  throw InputError("--today: expected a real date YYYY-MM-DD like 2026-11-22, found '" + today + "'");
}

std::string mm(const std::string& v) { return v.empty() ? v : Version::parse(v)->truncated(2); }
std::string subst_version(std::string t, const std::string& v) {
  for (auto p = t.find("{version}"); p != std::string::npos; p = t.find("{version}", p + v.size())) t.replace(p, 9, v);
  return t;
}

// Collects the facts a cell relies on: sources (deduplicated) and a warning per unconfirmed fact.
struct FactLog {
  Cell& cell;
  void use(const Fact& f, const std::string& what) {
    if (std::find(cell.sources.begin(), cell.sources.end(), f.source) == cell.sources.end())
      cell.sources.push_back(f.source);
    if (f.unconfirmed)
      cell.warnings.push_back("relies on an UNCONFIRMED fact: " + what + (f.note.empty() ? "" : " (" + f.note + ")") +
                              " (source: " + f.source + ")");
  }
};

std::string setting_or(const RuleContext& ctx, const std::string& key, const std::string& dflt) {
  std::string v = ctx.combo.settings.get(key);
  return v.empty() ? dflt : v;
}

// "libcudnn8=8.2.1.32-1+cuda11.3" -> "8.2.1.32"; "libcudnn9-cuda-12=9.5.1.17-1" -> "9.5.1.17".
std::string apt_version(const std::string& package) {
  std::string v = package.substr(package.find('=') + 1);
  return v.substr(0, v.find('-'));
}

}  // namespace

bool dlopens_unversioned(const PaddleLoads& loads, const std::string& lib) {
  return loads.dlopen == "unversioned" || std::count(loads.unversioned.begin(), loads.unversioned.end(), lib) > 0;
}

std::string cell_soname(const Cell& c, const NvidiaLibrary& lib) {
  auto major = [](const std::string& v) { return v.substr(0, v.find('.')); };
  if (lib.keyed_by == "tensorrt") return c.trt.empty() ? "" : lib.soname(major(c.trt));  // no TensorRT: no library
  return lib.soname(lib.keyed_by == "cudnn" ? major(c.cudnn) : major(c.cuda));
}

// Every name a Paddle build dlopens unversioned (all of them for a 2.x build; nvrtc, nvjpeg, nvtx
// for a 3.x one): the links the template makes ("libcublas.so=libcublas.so.11"; ":optional" = only
// when the image has the library: a feature-only one).
std::vector<std::string> dynload_links(const Cell& c, const KnowledgeBase& kb) {
  if (c.variant != "gpu") return {};
  const PaddleLoads* loads = kb.paddle_loads(c.paddle, c.pip_cuda_libraries);
  if (!loads) return {};
  std::vector<std::string> out;
  for (const auto& l : loads->libs) {
    if (!dlopens_unversioned(*loads, l.lib)) continue;
    std::string so = cell_soname(c, *kb.library(l.lib));
    // Only a name for the same library: NVTX 3's libnvtx3interop.so.1 (CUDA 12.9+) is no libnvToolsExt.so.
    if (!so.empty() && so.rfind(kb.library(l.lib)->unversioned() + ".", 0) == 0)
      out.push_back(kb.library(l.lib)->unversioned() + "=" + so + (l.need == "required" ? "" : ":optional"));
  }
  return out;
}

namespace {

// The recipe behind a GPU cell's claims (Cell::cuda_base, cudnn_from): which base, and where its
// cuDNN comes from. A wheel that brings its own CUDA libraries gets the OS's CPU base (one copy of
// each library, the one Paddle pins); otherwise the claimed cuDNN is the base's, or NVIDIA's apt
// package of exactly that cuDNN on the runtime image. What cannot be had is left for the recipe
// rules to name (rules.h: recipe_rules).
void choose_recipe(Cell& c, const RuleContext& ctx, const PaddleGpuBuild& b, FactLog& log) {
  c.cuda_base = setting_or(ctx, "cuda_base", "nvidia");
  c.pip_cuda_libraries = b.pip_cuda_libraries;
  if (b.pip_cuda_libraries) {
    c.cudnn_from = "pip";
    c.cudnn_full = b.cudnn;
    if (const CpuBase* cpu = ctx.kb.cpu_base(c.os); cpu && c.cuda_base != "wheels") {
      log.use(*cpu, "OS base for " + c.os + " (Paddle's wheel brings the CUDA libraries)");
      c.base_image = cpu->image;
    }
    c.cuda_base = "none";
    return;
  }
  if (c.cuda_base == "wheels") {
    if (const CudaWheelBase* w = ctx.kb.cuda_wheels(c.cuda)) {
      log.use(*w, "CUDA " + c.cuda + " base from NVIDIA's PyPI wheels");
      c.base_image = w->image();
      c.cudnn_from = "base";
      c.cudnn_full = w->cudnn;
    }
    return;
  }
  if (c.cuda_base == "none") return;
  const CudaImages& img = *ctx.kb.cuda_images(c.cuda);
  log.use(img, "nvidia/cuda:" + img.full + " tags for " + c.os);
  // An nvidia/cuda tag is a pull from Docker Hub that NVIDIA may take away (it deletes end-of-life
  // tags); a base made from NVIDIA's PyPI wheels is built here from pinned, hashed inputs.
  c.warnings.push_back(
      ctx.kb.cuda_wheels(c.cuda)
          ? "base nvidia/cuda:" + img.full + "-…-" + c.os + ": a base made from NVIDIA's PyPI wheels exists for CUDA " +
                c.cuda + " (cuda_base: wheels; scripts/make-cuda-base.sh " + c.cuda + ")"
          : "base nvidia/cuda:" + img.full + "-…-" + c.os + ": PyPI has no NVIDIA wheels for CUDA " + c.cuda +
                ", so this cell depends on Docker Hub's tag, and NVIDIA deletes end-of-life tags (docker manifest "
                "inspect it before a release; mirror it into your registry)");
  auto claim = Version::parse(b.cudnn);
  bool shipped = !img.cudnn_shipped.empty() && claim->is_prefix_of(*Version::parse(img.cudnn_shipped));
  const CudnnApt* apt = shipped ? nullptr : ctx.kb.cudnn_apt(b.cudnn, c.cuda, c.os);
  if (apt) {
    log.use(*apt, "cuDNN " + apt->cudnn + " from NVIDIA's apt repository (" + apt->package + ")");
    c.base_image = "nvidia/cuda:" + img.full + "-" + c.flavor + "-" + c.os;
    c.cudnn_from = "apt";
    c.cudnn_package = apt->package;
    c.cudnn_full = apt_version(apt->package);
    return;
  }
  c.base_image = "nvidia/cuda:" + img.full + "-" + img.cudnn_tag + "-" + c.flavor + "-" + c.os;
  c.cudnn_from = "base";
  c.cudnn_full = img.cudnn_shipped;
}

void resolve_gpu(Cell& c, const RuleContext& ctx, FactLog& log) {
  const PaddleGpuBuild& b = *ctx.release.build_for(c.cuda, c.paddle);
  log.use(b, "Paddle " + ctx.release.series + " GPU build for CUDA " + b.cuda);
  std::string cudnn_axis = ctx.combo.axes.count("cudnn") ? ctx.combo.axes.at("cudnn") : "";
  std::string trt_axis = ctx.combo.axes.count("trt") ? ctx.combo.axes.at("trt") : "";
  c.cudnn = mm(cudnn_axis.empty() ? b.cudnn : cudnn_axis);
  // trt: none = this image ships no TensorRT (e.g. a local base; Paddle runs without it).
  c.trt = trt_axis == "none" ? "" : mm(trt_axis.empty() ? b.trt : trt_axis);
  // TensorRT is installed by pip (dockerfiles: overrides.trt_pip_requirement); a matrix's
  // build.trt_pip_requirement / trt_pip_index_url win (applied later).
  if (!c.trt.empty() && !b.trt_pip.requirement.empty()) {
    log.use(b.trt_pip, "TensorRT " + b.trt + " pip install spec (" + b.trt_pip.requirement + ")");
    c.overrides["trt_pip_requirement"] = b.trt_pip.requirement;
    if (!b.trt_pip.index_url.empty()) c.overrides["trt_pip_index_url"] = b.trt_pip.index_url;
    // PyPI's TensorRT packages are stubs: the matrix's tensorrt_index (NVIDIA's index, or a mirror)
    // serves the real wheel. A KB row with its own index (NGC's, real wheels) keeps it.
    std::string idx = ctx.combo.settings.get("tensorrt_index");
    if (!idx.empty() && b.trt_pip.index_url.empty()) c.overrides["trt_pip_index_url"] = idx;
  }
  c.pip_requirement = subst_version(b.requirement, c.paddle);
  c.pip_index_url = b.index_url;
  const CudaRelease* cr = ctx.kb.cuda(c.cuda);
  log.use(*cr, "CUDA " + c.cuda + " driver minimums");
  c.min_driver_full = cr->min_driver_full;
  c.min_driver =
      cr->min_driver_full.empty() || Version::parse(cr->min_driver_compat) < Version::parse(cr->min_driver_full).value()
          ? cr->min_driver_compat
          : cr->min_driver_full;
  auto facts = ctx.kb.cudnn_facts(cudnn_axis.empty() ? b.cudnn : cudnn_axis);
  if (facts.empty())
    c.warnings.push_back("the KB has no cuDNN " + (cudnn_axis.empty() ? b.cudnn : cudnn_axis) + " -> CUDA fact; CUDA " +
                         c.cuda + " support not checked");
  for (auto* f : facts) log.use(*f, "cuDNN " + f->cudnn.text() + " supports CUDA " + c.cuda);
  if (!b.min_driver.driver.empty()) {
    log.use(b.min_driver, "Paddle's driver floor for its CUDA " + c.cuda + " build");
    c.min_driver_paddle = b.min_driver.driver;
  }
  c.cuda_archs = b.compiled_archs;
  if (c.cuda_archs.empty() && !b.reported_archs.archs.empty()) {
    log.use(b.reported_archs,
            "GPU architectures reported for Paddle's CUDA " + c.cuda + " build (not read from a wheel)");
    c.cuda_archs_reported = b.reported_archs.archs, c.cuda_archs_reported_source = b.reported_archs.source;
  }
  if (c.cuda_archs.empty())
    c.warnings.push_back(
        "the GPU architectures compiled into Paddle " + c.paddle + "'s CUDA " + c.cuda +
        " build are not in the KB (imgtool kb derive WHEEL reads them): no GPU can be checked against them" +
        (c.cuda_archs_reported.empty()
             ? std::string()
             : " (reported, UNCONFIRMED: " + c.cuda_archs_reported + ", " + c.cuda_archs_reported_source + ")"));
  choose_recipe(c, ctx, b, log);
  c.dynload_links = dynload_links(c, ctx.kb);
}

void resolve_cpu(Cell& c, const RuleContext& ctx, FactLog& log) {
  log.use(ctx.release.cpu_fact, "Paddle " + ctx.release.series + " CPU wheel spec");
  c.pip_requirement = subst_version(ctx.release.cpu_requirement, c.paddle);
  c.pip_index_url = ctx.release.cpu_index_url;
  if (!ctx.combo.settings.get("base_image").empty()) return;
  const CpuBase& b = *ctx.kb.cpu_base(c.os);
  log.use(b, "CPU base for " + c.os);
  c.base_image = b.image;
}

// Matrix defaults and include settings win over the KB's defaults.
void apply_settings(Cell& c, const Settings& s) {
  const std::map<std::string, std::string*> fields = {
      {"repository", &c.repository},           {"base_image", &c.base_image},       {"base_digest", &c.base_digest},
      {"pip_requirement", &c.pip_requirement}, {"pip_index_url", &c.pip_index_url}, {"wheelhouse", &c.wheelhouse},
      {"template", &c.template_name}};
  for (auto& [k, v] : s.values)
    if (auto f = fields.find(k); f != fields.end()) *f->second = v;  // python_from is read by the rules only
  for (auto& [k, v] : s.build) c.overrides[k] = v;
  if (!c.wheelhouse.empty() && !s.values.count("pip_index_url")) c.pip_index_url.clear();
  if (auto at = c.base_image.find("@sha256:"); at != std::string::npos) {
    c.base_digest = c.base_image.substr(at + 1);
    c.base_image = c.base_image.substr(0, at);
  }
  if (c.base_digest.empty())
    c.warnings.push_back("base image " + c.base_image + " is tag-only (no digest pin): builds are not reproducible");
  if (c.wheelhouse.empty())  // an offline cell's wheels are hash-locked (dockerfiles/context.h wheel_lock)
    c.warnings.push_back("wheels from " + c.pip_index_url +
                         " are pinned by version, not by hash: pip resolves them at build time (a wheelhouse cell "
                         "is hash-locked)");
}

void python_eol(Cell& c, const KnowledgeBase& kb, const std::string& today) {
  const PythonEol* p = kb.python_eol(c.python);
  if (p && p->eol <= today)
    c.warnings.push_back("Python " + c.python + " reached end of life on " + p->eol +
                         (p->note.empty() ? "" : " (" + p->note + ")") + " (source: " + p->source + ")");
}

std::map<std::string, std::string> tag_values(const Cell& c) {
  std::string py = c.python;
  py.erase(std::remove(py.begin(), py.end(), '.'), py.end());
  return {{"paddle", c.paddle}, {"variant", c.variant},
          {"cuda", c.cuda},     {"cudnn", c.cudnn},
          {"trt", c.trt},       {"python", c.python},
          {"py", "py" + py},    {"os", c.os},
          {"flavor", c.flavor}, {"dev", c.flavor == "devel" ? "dev" : ""}};
}

Cell resolve(const RuleContext& ctx, const std::string& today) {
  Cell c;
  const Axes& a = ctx.combo.axes;
  c.repository = ctx.spec.repository;
  c.variant = a.at("variant");
  c.flavor = a.at("flavor");
  c.paddle = a.at("paddle");
  c.python = a.at("python");
  c.os = a.at("os");
  FactLog log{c};
  log.use(ctx.release, "Paddle " + ctx.release.series + " release facts");
  if (ctx.combo.settings.get("python_from") != "base")
    if (const OsPython* o = ctx.kb.os_python(c.os)) log.use(*o, o->name + " packages Python " + c.python);
  if (c.variant == "gpu") {
    c.cuda = a.at("cuda");
    resolve_gpu(c, ctx, log);
  } else {
    resolve_cpu(c, ctx, log);
  }
  apply_settings(c, ctx.combo.settings);
  python_eol(c, ctx.kb, today);
  c.tag = render_tag(ctx.spec.tag_template.at(c.variant), tag_values(c));
  return c;
}

void check_unique_tags(const std::vector<Cell>& kept, const std::vector<std::string>& where) {
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < kept.size(); ++i) {
    auto [it, fresh] = seen.emplace(kept[i].tag, i);
    if (fresh) continue;
    const Cell& o = kept[it->second];
    throw InputError(where[i] + ": expected unique tags, found '" + kept[i].tag + "' for both python " + o.python +
                     "/" + o.os + "/" + o.flavor + " and python " + kept[i].python + "/" + kept[i].os + "/" +
                     kept[i].flavor + " (add {python}/{os} to tag_template, or narrow the axes)");
  }
}

}  // namespace

Plan plan_spec(const MatrixSpec& spec, const KnowledgeBase& kb, const PlanOptions& opt, bool require_kept) {
  std::string today = opt.today.empty() ? today_iso() : checked_today(opt.today);
  Plan plan;
  plan.kb_version = kb.version();
  plan.kb_released = kb.released();
  std::vector<std::string> where;
  for (const Combo& combo : expand(spec)) {
    const PaddleRelease* release = kb.paddle_release(combo.axes.at("paddle"));
    if (!release) {  // only off-axis questions get here: matrix files are validated against the KB
      std::vector<std::string> known;
      for (const auto& r : kb.paddles()) known.insert(known.end(), r.versions.begin(), r.versions.end());
      std::sort(known.begin(), known.end(), [](auto& a, auto& b) { return *Version::parse(a) < *Version::parse(b); });
      plan.skipped.push_back({combo.axes, "paddle-release",
                              "the knowledge base has no Paddle release " + combo.axes.at("paddle") + " (it knows " +
                                  strings::join(known, ", ") + ")",
                              kb.dir() + "/paddle.yaml"});
      continue;
    }
    RuleContext ctx{combo, kb, spec, *release};
    auto v = first_failure(ctx);
    Cell cell;
    bool unconfirmed_tag = false;
    if (!v) {
      cell = resolve(ctx, today);
      v = first_recipe_failure(cell, ctx);
      if (!v && spec.only_published) v = published_rule(cell, ctx, unconfirmed_tag);
    }
    if (v) {
      plan.skipped.push_back({combo.axes, v->rule, v->reason, v->source});
      continue;
    }
    if (unconfirmed_tag)
      cell.warnings.push_back("relies on an UNCONFIRMED fact: tag " + cell.tag +
                              " as a published Paddle image (source: " + ctx.release.published_fact.source + ")");
    plan.kept.push_back(cell);
    where.push_back(combo.where);
  }
  if (!require_kept) return plan;
  check_unique_tags(plan.kept, where);
  if (plan.kept.empty())
    throw InputError(spec.axes_where + ": expected at least one kept cell, found none (" +
                     std::to_string(plan.skipped.size()) + " skipped" +
                     (plan.skipped.empty() ? "" : "; first: " + plan.skipped.front().reason) + ")");
  return plan;
}

Plan plan_matrix(const std::string& matrix_path, const KnowledgeBase& kb, const PlanOptions& opt) {
  return plan_spec(read_matrix_file(matrix_path, kb), kb, opt, true);
}

nlohmann::json to_json(const Skipped& s) {
  return {{"axes", s.axes}, {"rule", s.rule}, {"reason", s.reason}, {"source", s.source}};
}

nlohmann::json to_json(const Plan& p) {
  nlohmann::json skipped = nlohmann::json::array();
  for (auto& s : p.skipped) skipped.push_back(to_json(s));
  return {{"kept", p.kept}, {"skipped", skipped}, {"warnings", p.warnings}, {"kb_version", p.kb_version}};
}

}  // namespace imgtool::matrix
