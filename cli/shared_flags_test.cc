// Flags several commands share, through the real binary: the smoke flags of `smoke`, `verify` and
// `nightly` (cli/smoke_flags.h) and --kb (cli/kb_flag.h) on `build` and `nightly`.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/fs.h"
#include "tests/fixtures.h"

using namespace imgtool;
namespace fs = std::filesystem;
namespace fx = imgtool::testing;

namespace {
// The flag names a command's --help lists ("--smoke-timeout,--timeout INT" names two).
std::set<std::string> flags_of(const std::string& command) {
  auto help = fx::imgtool({command, "--help"});
  REQUIRE(help.exit_code == 0);
  std::set<std::string> names;
  std::string word;
  for (char c : help.out + "\n") {
    if (c != ' ' && c != ',' && c != '\n') {
      word += c;
      continue;
    }
    if (word.rfind("--", 0) == 0) names.insert(word);
    word.clear();
  }
  return names;
}
}  // namespace

TEST_CASE("smoke, verify and nightly take the same smoke flags") {
  std::vector<std::string> shared = {"--gpus", "--gpu-host",      "--no-gpu-host", "--shm-size", "--profile",
                                     "--set",  "--smoke-timeout", "--reps",        "--records",  "--no-record"};
  for (std::string cmd : {"smoke", "verify", "nightly"}) {
    auto names = flags_of(cmd);
    for (auto& flag : shared) CHECK_MESSAGE(names.count(flag), cmd << " " << flag);
  }
  CHECK(flags_of("smoke").count("--timeout"));  // smoke's older name of --smoke-timeout
}

TEST_CASE(
    "build and nightly --kb DIR: planned, generated and reported with that knowledge base; nightly --profile reaches "
    "the smoke") {
  fx::ScratchDir d("kb-flag");
  fs::copy(fx::source_dir() + "/matrix/kb", d.path / "kb");
  std::string kb_yaml = read_file(d.path / "kb/kb.yaml");
  size_t at = kb_yaml.find("version: \"");
  REQUIRE(at != std::string::npos);
  kb_yaml.insert(kb_yaml.find('"', at + 10), "-kbflag");  // version: "X-kbflag"
  write_file_atomic(d.path / "kb/kb.yaml", kb_yaml);
  write_file_atomic(d.path / "wh/paddlepaddle-3.3.1-cp311-cp311-manylinux1_x86_64.whl", "wheel");
  RunOptions env;  // no engine: the builds fail, after the cells were planned and generated
  env.env["IMGTOOL_WHEELHOUSE"] = (d.path / "wh").string();
  env.env["DOCKER_HOST"] = "unix://" + (d.path / "no-engine.sock").string();
  std::string local = fx::source_dir() + "/matrix/local.yaml", kb = (d.path / "kb").string();
  auto kb_version_of = [](const fs::path& generated) {
    for (auto& e : fs::recursive_directory_iterator(generated))
      if (e.path().filename() == "cell.json")
        return nlohmann::json::parse(read_file(e.path()))["kb_version"].get<std::string>();
    return std::string("no cell.json");
  };

  auto build = fx::imgtool({"build", local, "--kb", kb, "--state", (d.path / "s1").string(), "-q"}, env);
  INFO(build.out << build.err);
  CHECK(build.exit_code == 1);  // no engine
  CHECK(kb_version_of(d.path / "s1/generated").rfind("-kbflag+sha256:") != std::string::npos);

  REQUIRE(fx::imgtool({"keygen", "--out", (d.path / "k").string()}).exit_code == 0);
  auto nightly = fx::imgtool(
      {"nightly", local, "--kb", kb, "--registry", "127.0.0.1:1/ns", "--key", (d.path / "k.key").string(), "--report",
       (d.path / "r").string(), "--state", (d.path / "s2").string(), "-q", "--profile", "ocr", "--gpus", "1"},
      env);
  INFO(nightly.out << nightly.err);
  CHECK(nightly.exit_code == 1);
  CHECK(kb_version_of(d.path / "s2/generated").rfind("-kbflag+sha256:") != std::string::npos);
  auto report = nlohmann::json::parse(read_file(d.path / "r/nightly.json"));
  CHECK(report["kb"]["version"].get<std::string>().rfind("-kbflag+sha256:") != std::string::npos);
  // The smoke settings (report and smoke cache key): the user's --gpus over the profile, the profile's /dev/shm and
  // limits.
  CHECK(report["gpus"].get<std::string>().rfind("1 --shm-size 16g --ulimit memlock=-1 --ulimit stack=67108864", 0) ==
        0);
}
