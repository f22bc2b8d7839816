#include "verify/verify_smoke.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>

#include "core/error.h"
#include "smoke/smoke_judge.h"
#include "smoke/smoke_report.h"

namespace imgtool::verify {
namespace {

using nlohmann::json;

void say(const VerifySmokeOptions& o, const std::string& line) {
  if (o.log) o.log(line);
}

std::string jstr(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// The manifest the static checks read, served as is; blobs come from the
// underlying source by digest (re-hashed there), so a tag moved meanwhile
// cannot change what is loaded.
class PinnedSource : public image::ImageSource {
 public:
  PinnedSource(image::ImageSource& inner, image::Manifest m) : inner_(inner), m_(std::move(m)) {}
  image::Manifest manifest() override { return m_; }
  std::unique_ptr<image::BlobReader> open_blob(const image::Descriptor& d) override { return inner_.open_blob(d); }
  std::string describe() const override { return inner_.describe(); }

 private:
  image::ImageSource& inner_;
  image::Manifest m_;
};

engine::Engine& engine_of(const VerifySmokeOptions& o) {
  if (!o.engine) throw Error("verify: the smoke part was handed no engine (VerifySmokeOptions::engine)");
  return *o.engine;
}

// The local image's ID; "" when the engine has none (or cannot be reached: the load row says so).
std::string local_id(const std::string& image, engine::Engine& docker) {
  try {
    auto i = docker.inspect(image);
    return i ? i->id : "";
  } catch (const Error&) {
    return "";
  }
}

// The image in the local engine that the smoke runs, and the temporary name to drop afterwards.
struct LocalImage {
  std::string run_ref;  // what `docker run` gets ("" = could not be made local)
  std::string temp;     // temporary name to remove ("" = none)
  CheckResult row;
};

const char* kLoadTitle = "image available in the local Docker engine";

LocalImage make_local(const image::Reference& r, const image::Manifest& m, const VerifySmokeOptions& o) {
  LocalImage li;
  const std::string config = m.config().digest;
  const std::string expected = "the image with config " + config.substr(0, 19) + "… in the local Docker engine";
  engine::Engine& docker = engine_of(o);
  if (local_id(config, docker) == config) {
    li.run_ref = config;
    li.row = {"smoke.load",
              kLoadTitle,
              Status::kPass,
              expected,
              "already present as image " + config.substr(0, 19) + "… (same config, same layers); not loaded",
              ""};
    return li;
  }
  if (r.transport == image::Transport::docker_daemon) {
    li.row = {"smoke.load",
              kLoadTitle,
              Status::kFail,
              expected,
              r.str() + " is no longer image " + config.substr(0, 19) + "… (removed or re-tagged during verify)",
              "re-run verify; do not rebuild or re-tag the image while it is verified"};
    return li;
  }
  std::string temp = temporary_name(r, m.digest());
  say(o, "verify: loading " + r.text + " into the local Docker engine as " + temp + " for the smoke test");
  try {
    auto src = image::open_source(r, o.transport);
    PinnedSource pinned(*src, m);
    li.temp = temp;  // from here on it may exist
    auto res = docker.load(pinned, temp, o.log);
    std::string id = local_id(temp, docker);
    if (id != config) {
      li.row = {"smoke.load",
                kLoadTitle,
                Status::kFail,
                expected,
                "loaded as " + temp + " with image ID " + (id.empty() ? "(none)" : id),
                "the Docker engine re-encoded the image (containerd image store?): smoke it with "
                "`imgtool smoke IMAGE` after `docker pull`"};
      return li;
    }
    li.run_ref = temp;
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", res.seconds);
    li.row = {"smoke.load",
              kLoadTitle,
              Status::kPass,
              expected,
              "loaded by digest " + m.digest().substr(0, 19) + "… as " + temp + " (" + std::to_string(res.blobs) +
                  " blobs, " + secs + " s); removed after the smoke test",
              ""};
  } catch (const std::exception& e) {
    li.row = {"smoke.load",
              kLoadTitle,
              Status::kFail,
              expected,
              std::string("loading failed: ") + e.what(),
              "check that the Docker engine is running and reachable ($DOCKER_HOST or /var/run/docker.sock) "
              "and has disk space; or `docker pull` the image and verify docker-daemon:NAME:TAG"};
  }
  return li;
}

void drop_temporary(const std::string& temp, const VerifySmokeOptions& o) {
  if (temp.empty()) return;
  try {
    engine_of(o).remove(temp);  // false: already gone
  } catch (const std::exception& e) {
    say(o, std::string("verify: warning: could not remove the temporary image ") + temp + ": " + e.what());
  }
}

// ---- rows ----

struct SectionText {
  const char* name;
  const char* title;
  const char* gpu;  // expected, gpu image
  const char* cpu;  // expected, cpu image
};

const SectionText kSections[] = {
    {"environment", "probe runs in the image", "the image's python3 runs the probe (OS, glibc, Python reported)",
     "the image's python3 runs the probe (OS, glibc, Python reported)"},
    {"shm", "/dev/shm size", "/dev/shm >= 1 GiB for DataLoader workers (a run setting: --shm-size)",
     "/dev/shm >= 1 GiB for DataLoader workers (a run setting: --shm-size)"},
    {"libraries", "CUDA libraries load", "CUDA runtime, cuBLAS and cuDNN load; libcudnn.so loads",
     "no CUDA libraries needed (cpu image)"},
    {"driver", "GPU and driver in the container", "an NVIDIA GPU and driver visible in the container (libcuda.so.1)",
     "no GPU needed (cpu image)"},
    {"compat", "driver supports the image's CUDA", "a driver new enough for the image's CUDA",
     "no GPU needed (cpu image)"},
    {"kernels", "CUDA kernels run", "a PTX kernel computes correctly; memory bandwidth measured",
     "no GPU needed (cpu image)"},
    {"blas", "cuBLAS GEMM runs", "the image's cuBLAS runs a GEMM; TFLOP/s measured", "no GPU needed (cpu image)"},
    {"paddle", "Paddle works", "a GPU build of Paddle (is_compiled_with_cuda) whose run_check works on 1 GPU",
     "Paddle imports and run_check works on CPU"},
};

bool named_in(const std::vector<std::string>& reasons, const std::string& section) {
  for (const auto& r : reasons)
    if (r.rfind(section + ":", 0) == 0) return true;
  return false;
}

Status section_status(const std::string& probe_status, bool named, bool cpu, const std::string& section) {
  if (named) return Status::kFail;
  if (probe_status == "ok") return Status::kPass;
  if (cpu && section == "libraries") return Status::kSkip;  // a cpu image has no CUDA libraries by design
  if (probe_status == "skipped") return Status::kSkip;
  return Status::kWarn;  // warn, or a fail the verdict does not count for this variant
}

CheckResult throughput_row(const smoke::Judgement& j) {
  std::string expected;
  if (j.floor) expected = ">= floor " + num(*j.floor) + " " + j.record.unit;
  if (j.median)
    expected += std::string(expected.empty() ? "" : "; ") + "within 10% of the median " + num(*j.median) + " " +
                j.record.unit + " of " + std::to_string(j.history_runs) + " earlier runs";
  if (expected.empty()) expected = "recorded (no floor or history to judge against yet)";
  std::string found = num(j.record.value) + " " + j.record.unit + " on " + j.record.gpu + ", driver " + j.record.driver;
  if (!j.notes.empty()) found += " (" + join(j.notes, "; ") + ")";
  bool fail = j.status == Status::kFail;
  return {"smoke.throughput." + j.record.metric,
          j.record.metric + " throughput",
          j.status,
          expected,
          found,
          fail ? "check GPU clocks, power and thermal limits and the driver; compare with `imgtool history --tag " +
                     j.record.tag + "`"
               : ""};
}

}  // namespace

std::string temporary_name(const image::Reference& r, const std::string& manifest_digest) {
  std::string base = r.name;
  if (r.transport == image::Transport::oci) {  // a folder: its last component
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    base = base.substr(base.rfind('/') == std::string::npos ? 0 : base.rfind('/') + 1);
  }
  std::string repo;
  for (char c : base) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool ok = std::isalnum(static_cast<unsigned char>(l)) || l == '.' || l == '_' || l == '-' || l == '/';
    repo += ok ? l : '-';
  }
  // docker path components: [a-z0-9]+ separated by [._-]|__ ; trim separators at component edges
  std::string clean, comp;
  auto flush = [&] {
    size_t a = comp.find_first_not_of("._-"), b = comp.find_last_not_of("._-");
    if (a != std::string::npos) clean += (clean.empty() ? "" : "/") + comp.substr(a, b - a + 1);
    comp.clear();
  };
  auto sep = [](char c) { return c == '.' || c == '_' || c == '-'; };
  for (char c : repo) {
    if (c == '/')
      flush();
    else if (!(sep(c) && !comp.empty() && sep(comp.back())))
      comp += c;  // one separator at a time
  }
  flush();
  if (clean.empty()) clean = "image";
  std::string hex = manifest_digest.rfind("sha256:", 0) == 0 ? manifest_digest.substr(7, 12) : "local";
  return "imgtool-verify/" + clean + ":" + hex + "-" + std::to_string(::getpid());
}

std::vector<CheckResult> smoke_rows(const smoke::SmokeResult& res, const std::vector<smoke::Judgement>& throughput) {
  std::vector<CheckResult> rows;
  const bool cpu = res.expect_variant == "cpu";
  std::string gpus = "none";
  for (size_t i = 0; i + 1 < res.argv.size(); ++i)
    if (res.argv[i] == "--gpus") gpus = res.argv[i + 1];
  std::string first_fix;
  if (res.host) {
    std::string found = res.host->summary;
    if (!res.host->evidence.empty()) found += " (docker said: " + res.host->evidence + ")";
    rows.push_back({"smoke.host", "docker starts the probe container", Status::kFail,
                    "`docker run --gpus " + gpus + "` starts the probe container", found, res.host->fix});
    first_fix = res.host->fix;
  }
  if (res.probe.is_object()) {
    for (const auto& s : kSections) {
      if (!res.probe.contains(s.name)) continue;
      const json& sec = res.probe[s.name];
      Status st = section_status(jstr(sec, "status"), named_in(res.reasons, s.name), cpu, s.name);
      std::string found = jstr(sec, "reason");
      if (st == Status::kSkip && cpu && std::string(s.name) == "libraries")
        found = "not required for a cpu image (" + found + ")";
      std::string fix = st == Status::kPass ? "" : jstr(sec, "fix");
      if (st == Status::kFail && first_fix.empty()) first_fix = fix;
      rows.push_back({std::string("smoke.") + s.name, s.title, st, cpu ? s.cpu : s.gpu, found, fix});
    }
  }
  for (const auto& j : throughput) rows.push_back(throughput_row(j));
  std::string expected = res.expect_variant == "gpu"
                             ? "a working GPU and a GPU Paddle (run_check on 1 GPU), --gpus " + gpus
                         : res.expect_variant == "cpu" ? "Paddle imports and run_check works on CPU, --gpus " + gpus
                                                       : "a known variant (io.imgtool.variant gpu|cpu)";
  if (res.passed()) {
    std::string found = "pass";
    if (!res.warnings.empty())
      found += " with " + std::to_string(res.warnings.size()) + " warning(s): " + join(res.warnings, "; ");
    rows.push_back({"smoke", "GPU smoke test verdict", Status::kPass, expected, found, ""});
  } else {
    std::string found = res.reasons.empty() ? "fail" : join(res.reasons, "; ");
    if (res.timed_out) found = "timed out; " + found;
    rows.push_back({"smoke", "GPU smoke test verdict", Status::kFail, expected, found,
                    first_fix.empty() ? "see the failed smoke.* rows; re-run alone with `imgtool smoke IMAGE --gpus " +
                                            gpus + " --json` for the full probe document"
                                      : first_fix});
  }
  return rows;
}

void verify_smoke(const std::string& ref, const image::Manifest& m, Report& report, const VerifySmokeOptions& o) {
  if (o.require_signature)
    for (const auto& c : report.checks)
      if (c.id == "signature" && c.status == Status::kFail) {
        report.add({"smoke", "GPU smoke test verdict", Status::kSkip, "an image signed by the given key to run",
                    "not run: the signature did not verify, and an unverified image is not run on this host", ""});
        return;
      }
  image::Reference r = image::parse_reference(ref);
  LocalImage li = make_local(r, m, o);
  report.add(li.row);
  if (li.run_ref.empty()) {
    drop_temporary(li.temp, o);
    report.add({"smoke", "GPU smoke test verdict", Status::kFail, "the smoke probe to run in the image",
                "not run: the image is not available in the local Docker engine", li.row.fix});
    return;
  }
  try {
    smoke::ImageFacts facts = smoke::inspect_image(li.run_ref, engine_of(o));
    smoke::SmokeOptions so = o.smoke;
    so.image = li.run_ref;
    so.gpus = smoke::resolve_gpus(so.gpus, facts.variant, so.gpu_host);
    say(o, "verify: smoke test of " + ref + " (--gpus " + so.gpus + ")");
    smoke::SmokeResult res = smoke::run_smoke(so, engine_of(o));
    // Records: the registry digest and the user's reference, not the temporary name.
    if (r.transport == image::Transport::docker) res.image.digest = r.with_digest(m.digest()).within_transport();
    if (res.image.tag == li.run_ref)
      res.image.tag = r.transport == image::Transport::oci
                          ? ref
                          : (r.tag.empty() ? r.with_digest(m.digest()) : r.with_tag(r.tag)).within_transport();
    // One rule with `imgtool smoke` and the nightly (smoke_judge.h): a records store that fails fails the smoke.
    auto throughput = smoke::record_and_judge_smoke(res, o.records);
    for (auto& row : smoke_rows(res, throughput)) report.add(std::move(row));
  } catch (const std::exception& e) {
    report.add({"smoke", "GPU smoke test verdict", Status::kFail, "the smoke probe to run in the image",
                std::string("not run: ") + e.what(),
                "check the Docker engine and the image; `imgtool smoke IMAGE --json` shows the run alone"});
  }
  drop_temporary(li.temp, o);
}

}  // namespace imgtool::verify
