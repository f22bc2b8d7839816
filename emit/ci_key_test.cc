// The emitted CI never leaves the release signing key behind (issue 23, item 1).
//
// Each emitted nightly script runs as GitHub (`bash --noprofile --norc -eo pipefail`) and GitLab
// (`set -eo pipefail`) run it, on a "runner" folder with its own TMPDIR/RUNNER_TEMP, the key in
// IMGTOOL_SIGNING_KEY as the CI secret gives it, and a stand-in `imgtool` that fails (exit 1, what
// a nightly with one failed cell returns) or hangs until the job is cancelled (SIGTERM). After
// each: no file anywhere under the runner holds the key. Then the real imgtool: `nightly --key
// env://IMGTOOL_SIGNING_KEY --passphrase-env …` with a stand-in `docker` that records the
// environment it was started with and imgtool's own (/proc/PPID/environ): neither holds the key,
// the passphrase, or their variables.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "core/fs.h"
#include "core/process.h"
#include "emit/ci_matrix.h"
#include "sign/keys.h"
#include "tests/fixtures.h"

using namespace imgtool;
namespace fs = std::filesystem;
namespace fx = imgtool::testing;

namespace {

const std::string kMatrix = fx::source_dir() + "/matrix/local.yaml";

std::string file_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_script(const fs::path& p, const std::string& body) {
  write_file_atomic(p, "#!/bin/bash\n" + body);
  fs::permissions(p, fs::perms::owner_all);
}

// Every regular file under `dir` whose bytes contain `needle`.
std::vector<std::string> files_holding(const fs::path& dir, const std::string& needle) {
  std::vector<std::string> out;
  for (auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && file_text(e.path()).find(needle) != std::string::npos) out.push_back(e.path().string());
  return out;
}

struct Scripts {
  std::string github, gitlab;
};

Scripts emitted_scripts() {
  std::vector<std::string> tags = {"3.2.0"};
  emit::CiOptions o{.matrix = "matrix/local.yaml", .shards = 2, .registry = "registry.example.com/ai"};
  YAML::Node gh = YAML::Load(emit::emit_github(tags, o));
  YAML::Node gl = YAML::Load(emit::emit_gitlab(tags, o));
  Scripts s;
  for (auto step : gh["jobs"]["nightly"]["steps"])
    if (step["run"]) s.github = step["run"].as<std::string>();
  s.gitlab = gl["nightly"]["script"][0].as<std::string>();
  return s;
}

// A runner: bin/imgtool (the stand-in), tmp/ (TMPDIR and RUNNER_TEMP), work/ (the job's folder).
struct Runner {
  fx::ScratchDir dir{"ci-key"};
  std::string pem;
  Runner() {
    for (auto d : {"bin", "tmp", "work"}) fs::create_directories(dir.path / d);
    pem = sign::private_key_pem(*sign::generate_key(), "");
  }
  std::vector<std::string> argv(const std::string& script) const {
    return {"bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script};
  }
  std::map<std::string, std::string> env() const {
    return {{"IMGTOOL_SIGNING_KEY", pem},
            {"SHARD", "1/2"},
            {"SHARD_INDEX", "1"},
            {"REPORT", "report-1"},
            {"TMPDIR", (dir.path / "tmp").string()},
            {"RUNNER_TEMP", (dir.path / "tmp").string()},
            {"PATH", (dir.path / "bin").string() + ":" + std::getenv("PATH")}};
  }
  // The key's base64 body: present in any file that holds the key, however it was written.
  std::string key_body() const { return pem.substr(pem.find('\n') + 1, 40); }
};

}  // namespace

TEST_CASE("emitted CI: the nightly step takes the key from the environment; no key file, no mktemp") {
  Scripts s = emitted_scripts();
  for (const std::string& script : {s.github, s.gitlab}) {
    INFO(script);
    CHECK(script.find("--key env://IMGTOOL_SIGNING_KEY") != std::string::npos);
    CHECK(script.find("mktemp") == std::string::npos);
    CHECK(script.find("> \"$") == std::string::npos);
  }
}

TEST_CASE("emitted CI: a failing nightly under bash -eo pipefail leaves no key file on the runner") {
  Scripts s = emitted_scripts();
  for (const std::string& script : {s.github, s.gitlab}) {
    Runner r;
    write_script(r.dir.path / "bin/imgtool",
                 "printf '%s\\n' \"$@\" > \"" + (r.dir.path / "work/args").string() + "\"\nexit 1\n");
    auto res = run(r.argv(script),
                   {.timeout = std::chrono::seconds(30), .env = r.env(), .cwd = (r.dir.path / "work").string()});
    INFO(script << "\n" << res.err);
    CHECK(res.exit_code == 1);  // the nightly's failure is the job's
    CHECK(file_text(r.dir.path / "work/args").find("env://IMGTOOL_SIGNING_KEY") != std::string::npos);
    CHECK(files_holding(r.dir.path, r.key_body()).empty());
    CHECK(fs::is_empty(r.dir.path / "tmp"));
  }
}

TEST_CASE("emitted CI: a nightly cancelled with SIGTERM leaves no key file on the runner") {
  Scripts s = emitted_scripts();
  for (const std::string& script : {s.github, s.gitlab}) {
    Runner r;
    fs::path started = r.dir.path / "work/started";
    write_script(r.dir.path / "bin/imgtool", "echo $$ > \"" + started.string() + "\"\nexec sleep 60\n");
    std::string bash = "bash";
    pid_t job = ::fork();
    if (job == 0) {
      ::setpgid(0, 0);
      for (auto& [k, v] : r.env()) ::setenv(k.c_str(), v.c_str(), 1);
      if (::chdir((r.dir.path / "work").c_str()) != 0) ::_exit(126);
      auto argv = r.argv(script);
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      ::execvp("bash", args.data());
      ::_exit(127);
    }
    for (int i = 0; i < 200 && !fs::exists(started); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(fs::exists(started));
    ::kill(-job, SIGTERM);  // a cancel: the runner signals the job's process group
    int status = 0;
    REQUIRE(::waitpid(job, &status, 0) == job);
    CHECK_FALSE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    INFO(script);
    CHECK(files_holding(r.dir.path, r.key_body()).empty());
    CHECK(fs::is_empty(r.dir.path / "tmp"));
  }
}

// The real binary: the key and its passphrase are read from the environment and gone from it
// before the first program imgtool starts (here the first `docker` call of the build).
TEST_CASE("nightly --key env://VAR: no program imgtool starts inherits the key or the passphrase") {
  Runner r;
  fs::path wh = r.dir.path / "wh", seen = r.dir.path / "work/seen";
  write_file_atomic(wh / "paddlepaddle-3.3.1-cp311-cp311-manylinux1_x86_64.whl", "paddle wheel");
  fs::create_directories(seen);
  // Records its own environment and its parent's (imgtool's, or timeout(1)'s for a build).
  write_script(r.dir.path / "bin/docker", "n=$(date +%s%N)\nenv > \"" + seen.string() +
                                              "/env-$n\"\n"
                                              "cat /proc/$PPID/environ > \"" +
                                              seen.string() +
                                              "/parent-$n\" 2>/dev/null\n"
                                              "echo 'stand-in docker: no engine here' >&2\nexit 1\n");
  std::string pass = "pass-phrase-7f3a";
  std::string encrypted = sign::private_key_pem(*sign::generate_key(), pass);
  auto env = r.env();
  env["IMGTOOL_SIGNING_KEY"] = encrypted;
  env["KEY_PASS"] = pass;
  env["IMGTOOL_WHEELHOUSE"] = wh.string();
  env["DOCKER_HOST"] = "unix://" + (r.dir.path / "no-engine.sock").string();
  env["IMGTOOL_BUILDKIT"] = "";
  auto res = fx::imgtool(
      {"nightly", kMatrix, "--registry", "127.0.0.1:9/ns", "--key", "env://IMGTOOL_SIGNING_KEY", "--passphrase-env",
       "KEY_PASS", "--report", (r.dir.path / "work/report").string(), "--state", (r.dir.path / "state").string(), "-q"},
      {.timeout = std::chrono::seconds(120), .env = env});
  INFO(res.out << res.err);
  CHECK(res.exit_code == 1);  // the cell failed to build: the stand-in docker
  REQUIRE_FALSE(fs::is_empty(seen));
  std::string body = encrypted.substr(encrypted.find('\n') + 1, 40);
  for (auto& e : fs::directory_iterator(seen)) {
    std::string text = file_text(e.path());
    INFO(e.path().string());
    CHECK(text.find(body) == std::string::npos);
    CHECK(text.find(pass) == std::string::npos);
    CHECK(text.find("IMGTOOL_SIGNING_KEY=") == std::string::npos);
    CHECK(text.find("KEY_PASS=") == std::string::npos);
  }
}

TEST_CASE("--key env://VAR: unset, empty name or a path instead of PEM text are one clear line each") {
  ::unsetenv("IMGTOOL_TEST_NO_SUCH_KEY");
  CHECK_THROWS_WITH_AS(
      sign::load_signing_key("env://IMGTOOL_TEST_NO_SUCH_KEY", ""),
      "--key env://IMGTOOL_TEST_NO_SUCH_KEY: expected the environment variable IMGTOOL_TEST_NO_SUCH_KEY "
      "to be set, found it unset",
      InputError);
  CHECK_THROWS_AS(sign::load_signing_key("env://", ""), InputError);
  ::setenv("IMGTOOL_TEST_KEY_PATH", "/builds/tmp/IMGTOOL_SIGNING_KEY", 1);
  CHECK_THROWS_WITH_AS(sign::load_signing_key("env://IMGTOOL_TEST_KEY_PATH", ""),
                       doctest::Contains("found no PEM block"), InputError);
  CHECK(std::getenv("IMGTOOL_TEST_KEY_PATH") == nullptr);  // taken even when refused
  std::string pem = sign::private_key_pem(*sign::generate_key(), "");
  ::setenv("IMGTOOL_TEST_KEY", pem.c_str(), 1);
  CHECK(sign::load_signing_key("env://IMGTOOL_TEST_KEY", ""));
  CHECK(std::getenv("IMGTOOL_TEST_KEY") == nullptr);
}

// The gpu-smoke job as each CI runs it, with stand-ins that record their environment: `imgtool plan`
// writes a collect.sh that records its own, `kubectl` records its own, `imgtool nightly collect`
// records imgtool's. Only that last one may hold the key (issue 33 item 2).
TEST_CASE("emitted gpu-smoke: kubectl, its plugins and collect.sh never see the key; only the signing line does") {
  emit::CiOptions o{
      .matrix = "matrix/local.yaml", .shards = 2, .registry = "registry.example.com/ai", .no_gpu_host = true};
  YAML::Node gh = YAML::Load(emit::emit_github({"3.2.0"}, o));
  YAML::Node gl = YAML::Load(emit::emit_gitlab({"3.2.0"}, o));
  // What each runner hands each script: GitHub a step's own env, GitLab the job's variables (all lines).
  std::vector<std::pair<std::string, bool>> scripts;  // script, key in its environment
  for (auto step : gh["jobs"]["gpu-smoke"]["steps"])
    if (step["run"]) scripts.push_back({step["run"].as<std::string>(), bool(step["env"]["IMGTOOL_SIGNING_KEY"])});
  REQUIRE(scripts.size() == 2);
  CHECK_FALSE(scripts[0].second);  // the cluster step
  CHECK(scripts[1].second);        // the signing step
  std::vector<std::string> runs = {scripts[0].first + "\n" + scripts[1].first,
                                   gl["gpu-smoke"]["script"][0].as<std::string>()};
  CHECK(emit::emit_gitlab({"3.2.0"}, o).find("make IMGTOOL_SIGNING_KEY a PROTECTED variable") != std::string::npos);
  for (size_t i = 0; i < runs.size(); ++i) {
    Runner r;
    fs::path seen = r.dir.path / "work/seen";
    fs::create_directories(seen);
    write_script(r.dir.path / "bin/kubectl", "env > \"" + seen.string() + "/kubectl-$(date +%s%N)\"\n");
    write_script(r.dir.path / "bin/imgtool", "if [ \"$1\" = plan ]; then mkdir -p k8s && printf 'env > \"" +
                                                 seen.string() +
                                                 "/collect\"\\n' > k8s/collect.sh && touch k8s/job-x.yaml; exit 0; fi\n"
                                                 "env > \"" +
                                                 seen.string() + "/imgtool-$1-$2\"\n");
    std::vector<std::string> argv = r.argv(i == 0 ? scripts[0].first : runs[1]);
    auto env = r.env();
    if (i == 0) env.erase("IMGTOOL_SIGNING_KEY");  // GitHub: the cluster step has no key
    auto res = run(argv, {.timeout = std::chrono::seconds(30), .env = env, .cwd = (r.dir.path / "work").string()});
    if (i == 0) {
      env["IMGTOOL_SIGNING_KEY"] = r.pem;  // GitHub: the signing step, in the same workspace
      res = run(r.argv(scripts[1].first),
                {.timeout = std::chrono::seconds(30), .env = env, .cwd = (r.dir.path / "work").string()});
    }
    INFO(runs[i] << "\n" << res.err);
    CHECK(res.exit_code == 0);
    size_t kubectl = 0;
    for (auto& e : fs::directory_iterator(seen)) {
      std::string name = e.path().filename().string();
      INFO(name);
      bool holds = file_text(e.path()).find(r.key_body()) != std::string::npos;
      CHECK(holds == (name == "imgtool-nightly-collect"));
      kubectl += name.rfind("kubectl-", 0) == 0;
    }
    CHECK(kubectl >= 2);
    CHECK(fs::exists(seen / "collect"));
    CHECK(fs::exists(seen / "imgtool-nightly-collect"));
  }
}

// `smoke --attest --key env://VAR`: the key is read and the variable removed BEFORE docker runs, so
// the docker CLI (and any credential helper it starts) never inherits it. A stand-in `docker` on
// PATH records its environment; the real engine answers the inspect of the test base image.
TEST_CASE("smoke --attest --key env://VAR: the docker CLI it starts never holds the key") {
  Runner r;
  if (!run({"docker", "image", "inspect", fx::base_image()}, {.timeout = std::chrono::seconds(30)}).ok()) {
    MESSAGE("SKIPPED: the test base image is not in the engine (make fixtures; `make test` makes it)");
    return;
  }
  fs::path seen = r.dir.path / "work/seen";
  fs::create_directories(seen);
  write_script(r.dir.path / "bin/docker",
               "env > \"" + seen.string() + "/docker-$(date +%s%N)\"\necho 'stand-in docker' >&2\nexit 125\n");
  auto env = r.env();
  auto res =
      fx::imgtool({"smoke", fx::base_image(), "--attest", "docker://127.0.0.1:9/ns/r@sha256:" + std::string(64, 'a'),
                   "--key", "env://IMGTOOL_SIGNING_KEY"},
                  {.timeout = std::chrono::seconds(120), .env = env});
  INFO(res.out << res.err);
  CHECK(res.exit_code != 0);  // the stand-in's run failed: nothing to attest
  REQUIRE_FALSE(fs::is_empty(seen));
  for (auto& e : fs::directory_iterator(seen)) {
    CHECK(file_text(e.path()).find(r.key_body()) == std::string::npos);
    CHECK(file_text(e.path()).find("IMGTOOL_SIGNING_KEY=") == std::string::npos);
  }
}
