#include "host/doctor.h"

#include <algorithm>
#include <regex>

#include "core/gpu_arch.h"
#include "core/version.h"

namespace imgtool::host {

const char* to_string(Status s) { return ok_name(s); }

bool DoctorReport::failed() const { return any_failed(rows); }

std::string newest_cuda_for_driver(const std::string& driver, const matrix::KnowledgeBase& kb) {
  auto d = Version::parse(driver);
  std::string best;
  if (!d) return best;
  for (auto& c : kb.cudas())
    if (*d >= *Version::parse(c.min_driver_compat) && (best.empty() || *Version::parse(c.cuda) > *Version::parse(best)))
      best = c.cuda;
  return best;
}

namespace {

// "doctor.<title in lower case, words joined by '-'>": "NVIDIA driver" -> "doctor.nvidia-driver".
std::string row_id(const std::string& title) {
  std::string id = "doctor.";
  for (char c : title) {
    if (isalnum((unsigned char)c))
      id += (char)tolower((unsigned char)c);
    else if (id.back() != '-' && id.back() != '.')
      id += '-';
  }
  while (id.back() == '-') id.pop_back();
  return id;
}

DoctorRow row(const std::string& title, Status s, std::string found, std::string fix, std::string id = "") {
  if (id.empty()) id = row_id(title);
  return {.id = std::move(id), .title = title, .status = s, .found = std::move(found), .fix = std::move(fix)};
}

// The oldest engine with `docker run --gpus` (Docker 19.03 added it).
constexpr const char* kMinEngine = "19.03";

std::string engine_number(const std::string& v) {
  size_t n = 0;
  while (n < v.size() && (isdigit((unsigned char)v[n]) || v[n] == '.')) ++n;
  return v.substr(0, n);
}

DoctorRow driver_row(const HostFacts& f, const matrix::KnowledgeBase& kb) {
  if (f.driver.empty())
    return row(
        "NVIDIA driver", Status::kWarn,
        "no NVIDIA driver (" + f.driver_from +
            "): this host runs cpu images only; gpu images would fail with \"could not select device driver\"",
        "to run gpu images install the NVIDIA driver (>= 525.60.13 for CUDA 12.x images, >= 580 for CUDA 13); for "
        "this host pick a cpu tag: imgtool select");
  std::string cuda = newest_cuda_for_driver(f.driver, kb);
  if (cuda.empty())
    return row("NVIDIA driver", Status::kFail,
               f.driver + " (from " + f.driver_from + "): older than every CUDA in the knowledge base",
               "upgrade the driver (>= 450.80.02 for CUDA 11.x images, >= 525.60.13 for 12.x)");
  const matrix::CudaRelease* cr = kb.cuda(cuda);
  DoctorRow r = row("NVIDIA driver", Status::kPass,
                    f.driver + " (from " + f.driver_from + "): serves CUDA images up to " + cuda +
                        " (minor-version compatibility, source: cuda.yaml)",
                    "");
  if (Version::parse(cuda)->major() < 12) {
    r.status = Status::kWarn;
    r.fix =
        "CUDA 12.x images need >= 525.60.13 (Paddle's CUDA 12.6 builds document >= 550.54.14): upgrade the driver to "
        "use them";
  }
  (void)cr;
  return r;
}

DoctorRow gpu_row(const HostFacts& f, const matrix::KnowledgeBase& kb) {
  if (f.driver.empty())
    return row("GPUs", Status::kWarn, "none visible (no driver)", "without a GPU only cpu images are useful here");
  if (f.gpus.empty())
    return row("GPUs", Status::kFail, "driver loaded but no GPU listed (" + f.gpus_error + ")",
               "check `nvidia-smi`; the driver may not match the kernel module");
  std::string found, unknown;
  for (auto& g : f.gpus) {
    const matrix::GpuSpec* spec = kb.find_gpu(g.name);
    std::string cc = !g.cc.empty() ? g.cc : spec ? spec->cc : "?";
    const matrix::ArchSupport* a = cc == "?" ? nullptr : kb.arch_for_cc(cc);
    found +=
        (found.empty() ? "" : "; ") + g.name + " (cc " + cc + (g.cc.empty() && spec ? " from the KB" : "") + ", " +
        g.memory +
        (a ? ", " + a->name + ": CUDA " + a->first_cuda + (a->last_cuda.empty() ? "+" : " to " + a->last_cuda) : "") +
        ")";
    if (!spec) unknown += (unknown.empty() ? "" : ", ") + g.name;
  }
  if (!unknown.empty())
    return row("GPUs", Status::kWarn, found,
               "add " + unknown +
                   " to matrix/kb/gpus.yaml (name as nvidia-smi prints it) so select and the smoke floors know it");
  return row("GPUs", Status::kPass, found, "");
}

std::vector<DoctorRow> engine_rows(const HostFacts& f) {
  const EngineInfo& e = f.engine;
  if (!e.reachable)
    return {
        row("Docker engine", Status::kFail, "not reachable: " + e.error,
            "start the engine (systemctl start docker) and make sure this user may use /var/run/docker.sock (docker "
            "group)")};
  std::vector<DoctorRow> rows;
  auto v = Version::parse(engine_number(e.version));
  if (!v || *v < *Version::parse(kMinEngine))
    rows.push_back(row("Docker engine", Status::kFail, e.version + ": older than 19.03, no `docker run --gpus`",
                       "upgrade Docker Engine to a supported release (>= 19.03 for --gpus; 20.10+ recommended)"));
  else
    rows.push_back(row("Docker engine", Status::kPass, e.version, ""));
  bool slow = e.storage_driver == "vfs" || e.storage_driver == "devicemapper";
  rows.push_back(
      row("storage driver", slow ? Status::kWarn : Status::kPass, e.storage_driver,
          slow ? "use overlay2: " + e.storage_driver + " copies or thin-provisions every layer of multi-GB CUDA images"
               : ""));
  rows.push_back(row("cgroup", Status::kPass, "v" + e.cgroup_version, ""));
  return rows;
}

// Container escapes of the NVIDIA container toolkit (NVIDIA security bulletins 5582, 5616, 5659): on a
// host below `fixed_in`, an image run with --gpus reaches the host whatever imgtool's fence -- and
// `imgtool smoke`/`verify` run images nobody has vetted yet.
struct ToolkitCve {
  const char* fixed_in;
  const char* id;
  const char* what;
};
constexpr ToolkitCve kToolkitCves[] = {
    {"1.16.2", "CVE-2024-0132", "a crafted image reaches the host's filesystem (a race in the toolkit's mounts)"},
    {"1.17.4", "CVE-2025-23359", "the CVE-2024-0132 fix bypassed: the same host filesystem access"},
    {"1.17.8", "CVE-2025-23266",
     "an image's ENV LD_PRELOAD is loaded by the enable-cuda-compat hook, which runs as root on the host"},
};

// Every CVE the version is exposed to, "; "-joined ("" when none).
std::string toolkit_cves(const std::string& version) {
  auto v = Version::parse(version);
  std::string out;
  for (const auto& c : kToolkitCves)
    if (v && *v < *Version::parse(c.fixed_in))
      out += (out.empty() ? "" : "; ") + std::string(c.id) + " (fixed in " + c.fixed_in + "): " + c.what;
  return out;
}

// features.disable-cuda-compat-lib-hook = true in the runtime's config.toml (the bulletin's mitigation).
bool compat_hook_disabled(const std::string& config) {
  static const std::regex on(R"((^|\n)\s*disable-cuda-compat-lib-hook\s*=\s*true\b)");
  return std::regex_search(config, on);
}

// The NVIDIA container toolkit's version: nvidia-ctk's, else nvidia-container-cli's; a toolkit
// without nvidia-ctk predates its runtime/CDI configuration command. A version with a known
// container escape fails; a patched one still warns while the enable-cuda-compat hook runs.
DoctorRow toolkit_row(const HostFacts& f) {
  std::string v = toolkit_version(f);
  if (v.empty())
    return row("NVIDIA container toolkit", Status::kWarn, "not installed (no nvidia-ctk, no nvidia-container-cli)",
               "install nvidia-container-toolkit (nvidia-ctk configures the runtime and CDI) to run gpu images");
  std::string from =
      f.ctk_version.empty() ? "nvidia-container-cli: " + f.container_cli : "nvidia-ctk: " + f.ctk_version;
  if (std::string cves = toolkit_cves(v); !cves.empty())
    return row("NVIDIA container toolkit", Status::kFail, v + " (" + from + "): " + cves,
               "upgrade nvidia-container-toolkit to 1.17.8 or later before running any image you have not vetted "
               "with --gpus (imgtool smoke, verify and the nightly do exactly that)");
  if (!compat_hook_disabled(f.runtime_config))
    return row("NVIDIA container toolkit", Status::kWarn,
               v + " (" + from + "); the enable-cuda-compat hook runs (the hook CVE-2025-23266 went through)",
               "unless images need CUDA forward compatibility, set features.disable-cuda-compat-lib-hook = true in "
               "/etc/nvidia-container-runtime/config.toml");
  if (f.ctk_version.empty())
    return row("NVIDIA container toolkit", Status::kWarn, v + " (" + from + "; no nvidia-ctk)",
               "upgrade nvidia-container-toolkit: nvidia-ctk configures the runtime and CDI");
  return row("NVIDIA container toolkit", Status::kPass, v + " (" + from + ")", "");
}

std::vector<DoctorRow> runtime_rows(const HostFacts& f) {
  bool runtime = std::find(f.engine.runtimes.begin(), f.engine.runtimes.end(), "nvidia") != f.engine.runtimes.end();
  bool hook = !f.container_cli.empty();
  std::string found = std::string(runtime ? "`nvidia` runtime registered" : "no `nvidia` runtime in docker info") +
                      "; " + (hook ? "nvidia-container-cli " + f.container_cli : "nvidia-container-cli not found");
  std::string fix =
      "install nvidia-container-toolkit, then `sudo nvidia-ctk runtime configure --runtime=docker` and restart dockerd";
  std::vector<DoctorRow> rows;
  if (f.driver.empty())
    rows.push_back(row("NVIDIA container runtime", runtime || hook ? Status::kPass : Status::kWarn, found,
                       runtime || hook ? "" : "not needed without a GPU; " + fix + " when one is added"));
  else
    rows.push_back(row("NVIDIA container runtime", runtime || hook ? Status::kPass : Status::kFail, found,
                       runtime || hook ? "" : fix));
  rows.push_back(toolkit_row(f));
  return rows;
}

DoctorRow gpu_run_row(const HostFacts& f) {
  if (!f.gpu_run_tried && (f.driver.empty() || !f.engine.reachable))
    return row("docker run --gpus all", Status::kWarn,
               std::string("not tried: ") + (f.driver.empty() ? "no NVIDIA driver" : "engine not reachable"),
               f.driver.empty() ? "run cpu images without --gpus" : "fix the engine row first");
  if (!f.gpu_run_tried)
    return row(
        "docker run --gpus all", Status::kWarn, "not tried: " + f.gpu_run_detail,
        "make the probe image local once (`docker pull ubuntu:22.04`; any image with glibc will do: nvidia-smi comes "
        "from the driver), or pass --probe-image with a local name, image ID or repo@sha256 digest");
  if (f.gpu_run_ok) return row("docker run --gpus all", Status::kPass, f.gpu_run_detail, "");
  return row("docker run --gpus all", Status::kFail, f.gpu_run_detail,
             "see the runtime rows; `could not select device driver` = no NVIDIA runtime/hook; `unknown or invalid "
             "runtime` = daemon.json names a missing runtime");
}

}  // namespace

std::vector<DoctorRow> image_rows(const HostFacts& f, const ImageNeeds& img, const matrix::KnowledgeBase& kb) {
  std::string what = "image " + img.ref;
  if (!img.platform.empty() && !f.cpu_arch.empty() && img.platform != "linux/" + f.cpu_arch)
    return {row(what + " platform", Status::kFail,
                img.platform + " image on this " + f.cpu_arch + " host: it does not start (\"exec format error\")",
                "use the linux/" + f.cpu_arch + " build of the image (imgtool select picks one for this host)",
                "doctor.image.platform")};
  if (img.variant != "gpu")
    return {row(what, Status::kPass,
                "a " + (img.variant.empty() ? std::string("unlabelled") : img.variant) + " image: no GPU needed", "",
                "doctor.image")};
  if (f.driver.empty() || f.gpus.empty())
    return {row(what, Status::kFail, "a gpu image (CUDA " + img.cuda + "), and this host has no usable GPU",
                "run it on a GPU host, or use the cpu tag of the same Paddle", "doctor.image")};
  std::vector<DoctorRow> rows;
  std::string runs, cannot;
  for (const auto& g : f.gpus) {
    const matrix::GpuSpec* spec = kb.find_gpu(g.name);
    std::string cc = !g.cc.empty() ? g.cc : spec ? spec->cc : "";
    std::string gap = kernel_gap(img.cuda_archs, cc);
    (gap.empty() ? runs : cannot) += (gap.empty() ? (runs.empty() ? "" : ", ") : (cannot.empty() ? "" : "; ")) +
                                     g.name + (gap.empty() ? "" : ": " + gap);
  }
  if (img.cuda_archs.empty())
    rows.push_back(row(what + " GPU code", Status::kWarn,
                       "the image does not say which GPUs its Paddle has kernels for (no io.imgtool.cuda-archs)",
                       "rebuild it with imgtool (the KB's compiled_archs label it)", "doctor.image.gpu-code"));
  else if (!cannot.empty())
    rows.push_back(row(what + " GPU code", Status::kFail, cannot,
                       "use a tag built for this GPU: imgtool select --repository … (or --matrix …) picks one",
                       "doctor.image.gpu-code"));
  else
    rows.push_back(
        row(what + " GPU code", Status::kPass, img.cuda_archs + " runs on " + runs, "", "doctor.image.gpu-code"));
  auto have = Version::parse(f.driver), need = Version::parse(img.min_driver);
  if (have && need)
    rows.push_back(
        row(what + " driver", *have >= *need ? Status::kPass : Status::kFail,
            "driver " + f.driver + (*have >= *need ? " >= " : " < ") + img.min_driver + " (io.imgtool.min-driver)",
            *have >= *need ? "" : "upgrade the driver to " + img.min_driver + " or newer, or use an older CUDA tag",
            "doctor.image.driver"));
  return rows;
}

DoctorReport diagnose(const HostFacts& f, const matrix::KnowledgeBase& kb) {
  DoctorReport r{f, {}};
  r.rows.push_back(driver_row(f, kb));
  r.rows.push_back(gpu_row(f, kb));
  for (auto& x : engine_rows(f)) r.rows.push_back(x);
  for (auto& x : runtime_rows(f)) r.rows.push_back(x);
  r.rows.push_back(gpu_run_row(f));
  return r;
}

nlohmann::json to_json(const DoctorReport& r) {
  nlohmann::json rows = nlohmann::json::array(), gpus = nlohmann::json::array();
  for (auto& x : r.rows)
    rows.push_back(
        {{"id", x.id}, {"check", x.title}, {"status", to_string(x.status)}, {"found", x.found}, {"fix", x.fix}});
  for (auto& g : r.facts.gpus) gpus.push_back({{"name", g.name}, {"cc", g.cc}, {"memory", g.memory}});
  return {{"driver", r.facts.driver},
          {"gpus", gpus},
          {"engine", r.facts.engine.version},
          {"rows", rows},
          {"ok", !r.failed()}};
}

std::string render_table(const DoctorReport& r) {
  std::string out;
  for (auto& x : r.rows) {
    std::string c = x.title;
    c.resize(std::max<size_t>(c.size(), 26), ' ');
    std::string s = to_string(x.status);
    s.resize(5, ' ');
    out += s + " " + c + " " + x.found + "\n";
    if (!x.fix.empty()) out += std::string(33, ' ') + "fix: " + x.fix + "\n";
  }
  return out;
}

}  // namespace imgtool::host
