// The runner on the fake engine: argv, label defaults, verdicts.
#include "smoke/smoke_runner.h"

#include <doctest/doctest.h>

#include "core/error.h"
#include "engine/fake_engine.h"
#include "smoke/smoke_judge.h"
#include "smoke/smoke_report.h"

using namespace imgtool;
using namespace imgtool::smoke;

namespace {

// The fake engine (engine/fake_engine.h) holding one labelled image; the probe's run answers `run_result`.
struct Fake : engine::FakeEngine {
  explicit Fake(RunResult run_result) {
    add_image(
        {"img:1", "img"},
        {.id = "sha256:abc",
         .repo_digests = {"reg/ai/paddle@sha256:def"},
         .labels = {{"io.imgtool.variant", "gpu"}, {"io.imgtool.cuda", "12.6"}, {"io.imgtool.tag", "3.2.0-gpu"}}});
    on_run = [run_result](const engine::RunRequest&) { return run_result; };
  }
  std::vector<std::string> argv(size_t i = 0) const { return engine::run_argv(runs.at(i)); }
};

bool has_seq(const std::vector<std::string>& v, const std::string& a, const std::string& b) {
  for (size_t i = 0; i + 1 < v.size(); ++i)
    if (v[i] == a && v[i + 1] == b) return true;
  return false;
}

}  // namespace

TEST_CASE("argv: probe mounted read-only, labels become expectations, no --gpus for none") {
  Fake fake{{0, false, R"({"verdict": {"status": "pass", "reasons": [], "warnings": ["shm: small"]}})", ""}};
  SmokeOptions opt;
  opt.image = "img:1";
  opt.probe_dir = "/p";
  auto res = run_smoke(opt, fake);
  auto argv = fake.argv();
  CHECK(argv == res.argv);
  CHECK(has_seq(argv, "-v", "/p:/imgtool-probe:ro"));
  CHECK(has_seq(argv, "--expect-variant", "gpu"));
  CHECK(has_seq(argv, "--expect-cuda", "12.6"));
  CHECK(has_seq(argv, "--gpus-requested", "none"));
  CHECK(std::find(argv.begin(), argv.end(), "--gpus") == argv.end());
  CHECK(res.passed());
  CHECK(res.warnings.size() == 1);
  CHECK(res.image.tag == "3.2.0-gpu");
  CHECK(res.image.digest == "reg/ai/paddle@sha256:def");
}

TEST_CASE("--gpus auto: all GPUs for a gpu-labelled image, none for a cpu one") {
  Fake fake{{0, false, R"({"verdict": {"status": "pass", "reasons": [], "warnings": []}})", ""}};
  SmokeOptions opt;
  opt.image = "img:1";
  opt.gpus = "auto";
  run_smoke(opt, fake);
  CHECK(has_seq(fake.argv(), "--gpus", "all"));  // the label says gpu
  Fake cpu{{0, false, R"({"verdict": {"status": "pass", "reasons": [], "warnings": []}})", ""}};
  opt.expect_variant = "cpu";
  run_smoke(opt, cpu);
  auto cpu_argv = cpu.argv();
  CHECK(std::find(cpu_argv.begin(), cpu_argv.end(), "--gpus") == cpu_argv.end());
  CHECK(has_seq(cpu_argv, "--gpus-requested", "none"));
}

TEST_CASE("argv: --gpus and --shm-size pass through, explicit expectations win") {
  SmokeOptions opt;
  opt.image = "img:1";
  opt.gpus = "all";
  opt.shm_size = "2g";
  opt.expect_variant = "cpu";
  opt.probe_dir = "/p";
  auto argv = docker_run_argv(opt, "n");
  CHECK(has_seq(argv, "--gpus", "all"));
  CHECK(has_seq(argv, "--shm-size", "2g"));
  CHECK(has_seq(argv, "--gpus-requested", "all"));
  CHECK(has_seq(argv, "--expect-variant", "cpu"));
}

TEST_CASE("host failure becomes the diagnosis") {
  Fake fake{{125, false, "",
             "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n"}};
  SmokeOptions opt;
  opt.image = "img:1";
  opt.gpus = "all";
  auto res = run_smoke(opt, fake);
  CHECK_FALSE(res.passed());
  REQUIRE(res.host);
  CHECK(res.host->code == "nvidia_runtime_missing");
  REQUIRE(res.reasons.size() == 1);
  CHECK(res.reasons[0].find("nvidia-container-toolkit") != std::string::npos);
  auto text = smoke_text(res, {});
  CHECK(text.find("FAIL") != std::string::npos);
  CHECK(res.to_json()["host_diagnosis"]["code"] == "nvidia_runtime_missing");
}

TEST_CASE("timeout: the run carries the smoke's timeout and container name, and fails") {
  Fake fake{{-1, true, "", ""}};  // the engine removes a timed-out container (engine/docker_engine_test.cc)
  SmokeOptions opt;
  opt.image = "img:1";
  opt.timeout = std::chrono::seconds(42);
  auto res = run_smoke(opt, fake);
  REQUIRE(fake.runs.size() == 1);
  CHECK(fake.runs[0].timeout == std::chrono::seconds(42));
  CHECK(fake.runs[0].name.rfind("imgtool-smoke-", 0) == 0);
  CHECK(res.host->code == "timeout");
}

TEST_CASE("an image the engine lacks is an Error naming the fix; an unreachable engine is a retryable Error") {
  Fake fake{{0, false, "{}", ""}};
  SmokeOptions opt;
  opt.image = "missing:1";
  try {
    run_smoke(opt, fake);
    FAIL("no error for a missing image");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("build or pull it first") != std::string::npos);
  }
  CHECK(fake.runs.empty());
  fake.unreachable = true;
  opt.image = "img:1";
  try {
    run_smoke(opt, fake);
    FAIL("no error for an unreachable engine");
  } catch (const Error& e) {
    CHECK(e.retryable);
  }
}

TEST_CASE("bad expected variant is an input error") {
  Fake fake{{0, false, "{}", ""}};
  SmokeOptions opt;
  opt.image = "img:1";
  opt.expect_variant = "tpu";
  CHECK_THROWS_AS(run_smoke(opt, fake), InputError);
}

TEST_CASE("probe verdict fail carries its reasons; garbage output is a host failure") {
  SmokeResult r;
  judge_smoke(r, {0, false, "noise {\"verdict\": {\"status\": \"fail\", \"reasons\": [\"paddle: CPU-only\"]}}", ""});
  CHECK_FALSE(r.passed());
  CHECK(r.reasons == std::vector<std::string>{"paddle: CPU-only"});
  SmokeResult g;
  judge_smoke(g, {1, false, "not json", "Traceback"});
  CHECK_FALSE(g.passed());
  CHECK(g.host->code == "docker_run_failed");
  // A verdict whose status is no string (fuzz_probe's find: std::terminate on a json type_error) fails.
  SmokeResult n;
  judge_smoke(n, {0, false, R"({"verdict": {"status": 1, "reasons": []}})", ""});
  CHECK_FALSE(n.passed());
  CHECK(n.verdict == "fail");
}

TEST_CASE("the probe's text is untrusted: reasons with NUL or ESC, and docker's stderr, come out printable") {
  SmokeResult r;
  judge_smoke(r, {0, false,
                  R"({"verdict": {"status": "fail", "reasons": ["paddle: \u0000import\u001b[2J failed\u0007"]},
                      "paddle": {"status": "fail", "reason": "\u001b]0;owned\u0007", "\u001b[1mkey": 1}})",
                  ""});
  CHECK(r.reasons == std::vector<std::string>{"paddle: \\x00import\\x1b[2J failed\\x07"});  // before: NUL, ESC, BEL raw
  CHECK(r.probe["paddle"]["reason"] == "\\x1b]0;owned\\x07");
  CHECK(r.probe["paddle"].contains("\\x1b[1mkey"));
  std::string text = smoke_text(r, {}) + r.to_json().dump();
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\a') == std::string::npos);
  CHECK(text.find(std::string(1, '\0')) == std::string::npos);
  SmokeResult g;
  judge_smoke(g, {125, false, "", "docker: Error response from daemon: \x1b[2Jgone\x9b\n"});
  CHECK(g.docker_stderr == "docker: Error response from daemon: \\x1b[2Jgone\\x9b\n");
  CHECK(g.to_json().dump().find("\\u001b") == std::string::npos);
}

TEST_CASE("smoke_and_judge: measured throughput with a records store that fails is a failed smoke, with the fix") {
  Fake fake{{0, false, R"({"driver": {"name": "NVIDIA H100", "driver_branch": "550"},
    "metrics": [{"metric": "gemm_fp16", "value": 100.0, "unit": "TFLOP/s"}],
    "verdict": {"status": "pass", "reasons": [], "warnings": []}})",
             ""}};
  SmokeOptions opt;
  opt.image = "img";
  opt.probe_dir = "/nonexistent-probe";
  RecordOptions ro{.records = "/proc/imgtool-no-such-dir/records.db",
                   .peaks = [](std::string_view) { return std::optional<GpuPeaks>(); }};
  auto s = smoke_and_judge(opt, ro, fake);
  CHECK_FALSE(s.result.passed());
  REQUIRE_FALSE(s.result.reasons.empty());
  CHECK(s.result.reasons.back().find("throughput not recorded") != std::string::npos);
  CHECK(s.result.reasons.back().find("--no-record") != std::string::npos);
  // Recording off: nothing stored, the probe's verdict stands.
  CHECK(smoke_and_judge(opt, {.record = false}, fake).result.passed());
}

TEST_CASE("a run profile's flags that would widen the fence are left out of the run and named in the warnings") {
  Fake fake{{0, false, R"({"verdict": {"status": "pass", "reasons": [], "warnings": []}})", ""}};
  SmokeOptions opt;
  opt.image = "img:1";
  opt.probe_dir = "/p";
  opt.run_flags = {"--ulimit", "memlock=-1", "--ipc", "host", "--user", "1000:1000", "--cap-add", "SYS_PTRACE"};
  auto res = run_smoke(opt, fake);
  auto argv = fake.argv();
  CHECK(argv == res.argv);
  CHECK(has_seq(argv, "--ulimit", "memlock=-1"));
  CHECK(has_seq(argv, "--user", "1000:1000"));
  CHECK_FALSE(has_seq(argv, "--ipc", "host"));
  CHECK(std::find(argv.begin(), argv.end(), "--cap-add") == argv.end());
  CHECK(has_seq(argv, "--cap-drop", "ALL"));
  CHECK(has_seq(argv, "--network", "none"));
  CHECK(res.passed());
  REQUIRE(res.warnings.size() == 2);
  CHECK(res.warnings[0].find("'--ipc host' not applied") != std::string::npos);
  CHECK(res.warnings[1].find("'--cap-add SYS_PTRACE' not applied") != std::string::npos);
}

TEST_CASE("stdout cut by the engine's cap with no report in it: the output_cut diagnosis; a cut stderr only warns") {
  RunResult flood{0, false, std::string(1000, 'x') + cut_note("stdout", engine::kMaxRunOutput, 99), "", 99, 0};
  SmokeResult res;
  judge_smoke(res, flood);
  CHECK_FALSE(res.passed());
  REQUIRE(res.host);
  CHECK(res.host->code == "output_cut");
  CHECK(res.reasons.at(0).find("more than 4194304 bytes to stdout (99 more were dropped)") != std::string::npos);
  RunResult noisy{0,
                  false,
                  R"({"verdict": {"status": "pass", "reasons": [], "warnings": []}})",
                  std::string(100, 'e') + cut_note("stderr", engine::kMaxRunOutput, 5),
                  0,
                  5};
  SmokeResult ok;
  judge_smoke(ok, noisy);
  CHECK(ok.passed());
  REQUIRE(ok.warnings.size() == 1);
  CHECK(ok.warnings[0].find("container stderr cut at 4194304 bytes (5 more dropped)") != std::string::npos);
}

TEST_CASE("a hostile image's 300 KB of nested brackets is no probe document, not a crash") {
  std::string deep = std::string(150000, '[') + std::string(150000, ']');
  for (const std::string& out : {"{\"verdict\": " + deep + "}", deep, "{\"a\":" + std::string(150000, '{')}) {
    SmokeResult res;
    judge_smoke(res, {0, false, out, ""});
    CHECK(res.probe.is_null());
    CHECK(res.verdict == "fail");
    CHECK(res.to_json().dump().size() < 20000);  // the report of it stays small and printable
  }
}

TEST_CASE("an image whose config sets LD_PRELOAD (or any LD_* but LD_LIBRARY_PATH) is never run with --gpus") {
  for (const char* var : {"LD_PRELOAD=/tmp/x.so", "LD_AUDIT=/x.so"}) {
    Fake fake{{0, false, R"({"verdict": {"status": "pass"}})", ""}};
    fake.add_image({"evil:1"}, {.id = "sha256:e", .labels = {{"io.imgtool.variant", "gpu"}}, .env = {var}});
    SmokeOptions opt;
    opt.image = "evil:1";
    opt.gpus = "all";
    opt.host_gpus = std::vector<HostGpu>{};
    CHECK_THROWS_WITH_AS(run_smoke(opt, fake), doctest::Contains("CVE-2025-23266"), CheckFailed);
    CHECK(fake.runs.empty());  // nothing ran
    opt.gpus = "none";         // no GPU, no NVIDIA hook: the fence holds
    run_smoke(opt, fake);
    CHECK(fake.runs.size() == 1);
  }
  Fake fine{{0, false, R"({"verdict": {"status": "pass"}})", ""}};
  fine.add_image({"ok:1"}, {.id = "sha256:o", .env = {"LD_LIBRARY_PATH=/usr/local/cuda/lib64", "PATH=/bin"}});
  SmokeOptions opt;
  opt.image = "ok:1";
  opt.gpus = "all";
  opt.host_gpus = std::vector<HostGpu>{};
  run_smoke(opt, fine);
  CHECK(fine.runs.size() == 1);
}
