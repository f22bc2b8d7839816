#include "smoke/smoke_diagnosis.h"

#include <algorithm>
#include <regex>
#include <vector>

namespace imgtool::smoke {
namespace {

// One row per known failure: a regex over docker's stderr, and the diagnosis.
// "$1" in summary/fix is replaced by the regex's first capture.
struct Rule {
  const char* pattern;
  const char* code;
  const char* summary;
  const char* fix;
  bool retryable = false;
};

const std::vector<Rule>& rules() {
  static const std::vector<Rule> table = {
      {R"(could not select device driver "[^"]*" with capabilities: \[\[gpu\]\])", "nvidia_runtime_missing",
       "NVIDIA Container Toolkit not installed or not configured: Docker has no device driver for --gpus",
       "install nvidia-container-toolkit, run `sudo nvidia-ctk runtime configure --runtime=docker`, then "
       "`sudo systemctl restart docker`; or run without --gpus for a CPU-only smoke"},
      {R"(unknown or invalid runtime name: nvidia)", "nvidia_runtime_missing",
       "the `nvidia` runtime is not registered with Docker",
       "install nvidia-container-toolkit, run `sudo nvidia-ctk runtime configure --runtime=docker`, then "
       "`sudo systemctl restart docker`"},
      {R"(unsatisfied condition: cuda>=([0-9.]+))", "driver_too_old",
       "host driver too old: the image requires cuda>=$1 (its NVIDIA_REQUIRE_CUDA) and the host driver supports "
       "an older CUDA",
       "upgrade the host driver to one that supports CUDA $1, or use an image built for an earlier CUDA; "
       "NVIDIA_DISABLE_REQUIRES=true skips the check (minor-version compatibility, at your own risk)"},
      {R"(unsatisfied condition: (driver[<>=]+[0-9.]+|brand=[a-z]+))", "driver_requirement",
       "the host driver does not satisfy the image's requirement $1 (NVIDIA_REQUIRE_CUDA)",
       "upgrade the host driver, or use an image whose NVIDIA_REQUIRE_CUDA the host satisfies"},
      {R"(nvml error: driver not loaded|load library failed: libnvidia-ml\.so\.1)", "driver_not_loaded",
       "the NVIDIA driver is not loaded on the host (NVML cannot initialise)",
       "install the NVIDIA driver on the host and check that `nvidia-smi` works"},
      {R"(error gathering device information|unknown device|invalid device ordinal)", "no_such_gpu",
       "the GPU named in --gpus does not exist on the host",
       "list devices with `nvidia-smi -L` and pass an existing one, e.g. --gpus device=0"},
      {R"(Cannot connect to the Docker daemon|docker daemon is not running)", "docker_unreachable",
       "the Docker engine is not reachable", "start docker (`systemctl start docker`) or set DOCKER_HOST", true},
      {R"(Unable to find image|No such image|pull access denied|manifest unknown)", "image_not_found",
       "the image is not present locally and could not be pulled",
       "build or pull the image first (`docker image ls` to check the reference)"},
      {R"(invalid size: '([^']*)')", "bad_shm_size", "docker rejected the --shm-size value '$1'",
       "pass a size such as 2g or 512m"},
      {R"re(exec: "([^"]+)": executable file not found in \$PATH)re", "no_python",
       "the image has no `$1` on PATH, so the probe cannot run",
       "pass --python with the image's interpreter (e.g. /opt/venv/bin/python)"},
  };
  return table;
}

// The literal text every match of `pattern` starts with, per top-level alternative ("" when one
// starts with a regex construct): a line holding none of them cannot match, and is not searched.
std::vector<std::string> needles_of(const std::string& pattern) {
  std::vector<std::string> out;
  std::string cur;
  bool literal = true;  // still in the current alternative's literal prefix
  int depth = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (depth == 0 && c == '|') {
      out.push_back(cur), cur.clear(), literal = true;
      continue;
    }
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == '\\') ++i;  // an escaped character: keep the pair out of the prefix (ends it)
    if (std::string("()[]{}.*+?^$\\|").find(c) != std::string::npos) literal = false;
    if (literal) cur += c;
  }
  out.push_back(cur);
  if (std::any_of(out.begin(), out.end(), [](const std::string& n) { return n.empty(); })) return {};
  return out;
}

struct Compiled {
  std::regex re;
  std::vector<std::string> needles;  // empty: search every line
};

// The rules' regexes, compiled once (a std::regex per call per rule cost the fuzzer a third of its time).
const std::vector<Compiled>& compiled() {
  static const std::vector<Compiled> all = [] {
    std::vector<Compiled> v;
    for (const Rule& r : rules()) v.push_back({std::regex(r.pattern), needles_of(r.pattern)});
    return v;
  }();
  return all;
}

bool may_match(const Compiled& c, const std::string& line) {
  return c.needles.empty() || std::any_of(c.needles.begin(), c.needles.end(),
                                          [&](const std::string& n) { return line.find(n) != std::string::npos; });
}

std::string substitute(std::string text, const std::string& capture) {
  for (size_t at; (at = text.find("$1")) != std::string::npos;) text.replace(at, 2, capture);
  return text;
}

}  // namespace

// Docker's own messages are single short lines. The rules are matched line by line, and a line
// longer than this is skipped: stderr also carries what the image printed (hostile text), and
// libstdc++'s regex recurses once per character it matches ("[^"]*" over a megabyte of it
// overflowed the stack).
constexpr size_t kMaxDiagnosedLine = 4096;

std::optional<HostDiagnosis> diagnose_docker_failure(std::string_view err) {
  for (size_t i = 0; i < rules().size(); ++i) {
    const Rule& r = rules()[i];
    const Compiled& c = compiled()[i];
    for (size_t b = 0; b < err.size();) {
      size_t e = std::min(err.find('\n', b), err.size());
      std::string line(err.substr(b, std::min(e - b, kMaxDiagnosedLine + 1)));
      b = e + 1;
      std::smatch m;
      if (line.size() > kMaxDiagnosedLine || !may_match(c, line) || !std::regex_search(line, m, c.re)) continue;
      std::string cap = m.size() > 1 ? m[1].str() : "";
      return HostDiagnosis{r.code, substitute(r.summary, cap), substitute(r.fix, cap), line, r.retryable};
    }
  }
  return std::nullopt;
}

HostDiagnosis output_cut_failure(uint64_t dropped, size_t cap) {
  return {"output_cut",
          "the container wrote more than " + std::to_string(cap) + " bytes to stdout (" + std::to_string(dropped) +
              " more were dropped) and what was kept holds no probe report; the probe itself writes ~10 KiB",
          "run the image by hand (the command above) to see what in it floods stdout (a sitecustomize, an "
          "entrypoint wrapper, a library's print)",
          "", false};
}

HostDiagnosis generic_docker_failure(int exit_code, bool timed_out, std::string_view err) {
  if (timed_out)
    return {"timeout", "the probe did not finish within the timeout",
            "raise --timeout, or look for a hung GPU "
            "(nvidia-smi) on the host",
            "", true};
  if (auto d = diagnose_docker_failure(err)) return *d;
  std::string last(err.substr(0, 2000));
  return {"docker_run_failed", "docker run exited " + std::to_string(exit_code) + " without a probe report",
          "read docker's message below and run the printed command by hand", last, false};
}

}  // namespace imgtool::smoke
