// Bad input through the real binary (issue 7): each class gets exit 2 and ONE line naming
// the file:line:column or the field, and leaves nothing half-written behind.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "core/hash.h"
#include "core/process.h"
#include "tests/fixtures.h"

using namespace imgtool;
namespace fs = std::filesystem;
namespace fx = imgtool::testing;

namespace {

RunResult cli(std::vector<std::string> args, const RunOptions& o = {}) { return fx::imgtool(std::move(args), o); }

// Exit 2, one line on stderr, containing `needle`.
void check_refused(const RunResult& r, const std::string& needle) {
  INFO("stderr: " << r.err << "\nstdout: " << r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(needle) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

std::string write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

// A wheelhouse in `dir`/wh holding a stand-in for the wheel matrix/local.yaml names, and the
// environment that points generate at it.
RunOptions local_wheelhouse(const fs::path& dir) {
  write(dir / "wh/paddlepaddle-3.3.1-cp311-cp311-manylinux1_x86_64.whl", "wheel");
  RunOptions env;
  env.env["IMGTOOL_WHEELHOUSE"] = (dir / "wh").string();
  return env;
}

const char* kAxes = "axes:\n  paddle: [\"3.0.0\"]\n  cuda: [\"12.6\"]\n  python: [\"3.11\"]\n  os: [ubuntu22.04]\n";

}  // namespace

TEST_CASE("matrix files: a repeated key is refused at its second position (YAML and JSON)") {
  fx::ScratchDir d("bad-dup");
  auto y = write(d.path / "dup.yaml", std::string("repository: paddle\n") + kAxes + "repository: other\n");
  check_refused(cli({"matrix", y}),
                y + ":7:1: expected each key once in a mapping, found 'repository' again (first at " + y + ":1:1)");
  auto nested =
      write(d.path / "nested.yaml", "axes:\n  paddle: [\"3.0.0\"]\n  cuda: [\"12.6\"]\n  paddle: [\"2.6.2\"]\n");
  check_refused(cli({"matrix", nested}), nested + ":4:3: expected each key once in a mapping, found 'paddle' again");
  auto j = write(d.path / "dup.json", R"({"axes": {"paddle": ["3.0.0"], "cuda": ["12.6"]},
  "include": [{"paddle": "3.0.0", "cuda": "12.6", "base_image": "a/b:1", "base_image": "c/d:2"}]})");
  check_refused(cli({"matrix", j}), j + ":2:74: expected each key once in a mapping, found 'base_image' again");
}

TEST_CASE("matrix files: values Docker would refuse later are refused now, at their position") {
  fx::ScratchDir d("bad-values");
  auto upper = write(d.path / "upper.yaml", std::string("repository: Paddle/GPU\n") + kAxes);
  check_refused(cli({"matrix", upper}), upper + ":1:13: 'repository': expected a repository of lower-case letters");
  auto in_defaults = write(d.path / "defaults.yaml", std::string(kAxes) + "defaults:\n  repository: ai/Paddle\n");
  check_refused(cli({"matrix", in_defaults}), in_defaults + ":7:15: 'repository': expected a repository of lower-case");
  auto base =
      write(d.path / "base.yaml", std::string(kAxes) + "defaults:\n  base_image: \"nvidia/cuda:12.6 runtime\"\n");
  check_refused(cli({"matrix", base}), base + ":7:15: 'base_image': expected a tag of [A-Za-z0-9_.-]");
  auto digest =
      write(d.path / "digest.yaml", std::string(kAxes) + "defaults:\n  base_image: \"nvidia/cuda@sha256:abc\"\n");
  check_refused(cli({"matrix", digest}), digest + ":7:15: 'base_image': expected @sha256:<64 hex digits>");
  auto pin = write(d.path / "pin.yaml", std::string(kAxes) + "defaults:\n  base_digest: latest\n");
  check_refused(cli({"matrix", pin}), pin + ":7:16: 'base_digest': expected sha256:<64 hex digits>, found 'latest'");
  auto latin1 = write(d.path / "latin1.yaml", std::string(kAxes) + "description: \"Caf\xE9\"\n");
  check_refused(cli({"matrix", latin1}), latin1 + ":6:18: expected UTF-8 text, found the byte 0xE9");
  auto desc = write(d.path / "desc.yaml", std::string(kAxes) + "description: [a, b]\n");
  check_refused(cli({"matrix", desc}), desc + ":6:14: expected 'description' to be a string, found a list");
  auto flag = write(d.path / "flag.json", R"({"only_published": "maybe", "axes": {"paddle": ["3.0.0"]}})");
  check_refused(cli({"matrix", flag}), flag + ":1:20: expected 'only_published' to be true or false");
}

TEST_CASE("flags: --out with a trailing slash works; keygen --out \"\" is refused; --today is a real date") {
  fx::ScratchDir d("bad-flags");
  std::string local = fx::source_dir() + "/matrix/local.yaml";
  RunOptions env = local_wheelhouse(d.path);
  auto g = cli({"generate", local, "--out", (d.path / "gen/").string()}, env);
  INFO(g.err);
  CHECK(g.exit_code == 0);
  size_t entries = 0;
  for (auto& e : fs::directory_iterator(d.path)) entries += e.path().filename() != "wh";
  CHECK(entries == 1);  // gen only: no staging or .old folder left beside or inside it
  CHECK(fs::exists(d.path / "gen/.imgtool-generated"));
  auto again = cli({"generate", local, "--out", (d.path / "gen/").string()}, env);
  CHECK(again.exit_code == 0);

  RunOptions in_scratch;
  in_scratch.cwd = d.path.string();
  check_refused(cli({"keygen", "--out", ""}, in_scratch), R"(imgtool: --out: expected a file path, found "")");
  check_refused(cli({"keygen", "--out", "keys/"}, in_scratch),
                "--out: key path prefix 'keys/': expected a prefix ending in a file name");
  CHECK(!fs::exists(d.path / ".key"));
  CHECK(!fs::exists(d.path / "keys"));

  std::string paddle = fx::source_dir() + "/matrix/paddle.yaml";
  for (const char* bad : {"2026-02-30", "2026-13-01", "tomorrow", "2026-1-01", "20261122"})
    check_refused(cli({"matrix", paddle, "--today", bad}),
                  std::string("--today: expected a real date YYYY-MM-DD like 2026-11-22, found '") + bad + "'");
  CHECK(cli({"matrix", paddle, "--today", "2028-02-29"}).exit_code == 0);
}

TEST_CASE("generate --out: a place that takes no folder is bad input naming --out, and nothing is written") {
  fx::ScratchDir d("bad-out");
  std::string local = fx::source_dir() + "/matrix/local.yaml";
  RunOptions env = local_wheelhouse(d.path);
  check_refused(
      cli({"generate", local, "--out", "/proc/x"}, env),
      "imgtool: --out '/proc/x': expected a place where a folder can be made, found /proc: no such folder, or one "
      "that takes no new folders (like /proc)");
  write(d.path / "file", "not a folder");
  check_refused(cli({"generate", local, "--out", (d.path / "file/gen").string()}, env),
                "--out '" + (d.path / "file/gen").string() + "': expected a place where a folder can be made, found " +
                    (d.path / "file").string() + ": a file where a folder should be");
  CHECK(read_file(d.path / "file") == "not a folder");
  CHECK(std::distance(fs::directory_iterator(d.path), fs::directory_iterator()) ==
        2);  // wh and file: no staging folder left
}

TEST_CASE("shared flags: smoke and nightly refuse a bad smoke flag alike, before anything runs; a bad --kb is named") {
  fx::ScratchDir d("bad-shared");
  std::vector<std::vector<std::string>> commands = {
      {"smoke", "no-such/image:1"},
      {"nightly", fx::source_dir() + "/matrix/local.yaml", "--registry", "127.0.0.1:1/ns", "--key",
       (d.path / "none.key").string(), "--report", (d.path / "r").string(), "--state", (d.path / "s").string()}};
  for (auto args : commands) {
    auto with = [&](std::vector<std::string> extra) {
      auto a = args;
      a.insert(a.end(), extra.begin(), extra.end());
      return cli(a);
    };
    check_refused(with({"--gpu-host", "bogus"}), "--gpu-host: expected one of gpu, none, test-double, found 'bogus'");
    check_refused(with({"--set", "shm_size=8gb"}), "--set shm_size=8gb: shm_size: expected a size > 0");
    check_refused(with({"--profile", "no-such-layer"}),
                  "--profile no-such-layer: expected a profile layer named 'no-such-layer'");
  }
  CHECK_FALSE(fs::exists(d.path / "r"));
  CHECK_FALSE(fs::exists(d.path / "s"));
  check_refused(cli({"build", fx::source_dir() + "/matrix/local.yaml", "--kb", (d.path / "no-kb").string(), "--state",
                     (d.path / "s").string()}),
                (d.path / "no-kb").string() + "/");
  CHECK_FALSE(fs::exists(d.path / "s"));
}

TEST_CASE("references: docker-daemon: names are checked like every other reference") {
  fx::ScratchDir d("bad-ref");
  std::string dst = "oci:" + (d.path / "out").string();
  check_refused(cli({"copy", "docker-daemon:Imgtool/Base:1", dst}),
                "bad image reference 'docker-daemon:Imgtool/Base:1': expected a repository of lower-case letters");
  check_refused(cli({"copy", "docker-daemon:a//b:1", dst}), "bad image reference 'docker-daemon:a//b:1'");
  check_refused(cli({"copy", "docker-daemon:a/b:-x", dst}), "expected a tag of");
  check_refused(cli({"copy", "docker-daemon:a/b:1", dst, "--renormalize"}),
                "--renormalize: expected --reproducible EPOCH beside it");
  CHECK(!fs::exists(d.path / "out"));
}

TEST_CASE("manifests: schemaVersion other than 2 or an unknown mediaType is refused, not copied and tagged") {
  fx::ScratchDir d("bad-manifest");
  auto blob = [&](const std::string& bytes) {
    std::string digest = sha256_digest(bytes);
    write(d.path / "src/blobs/sha256" / digest.substr(7), bytes);
    return nlohmann::json{{"digest", digest}, {"size", bytes.size()}};
  };
  auto layout = [&](const nlohmann::json& manifest, const std::string& type) {
    fs::remove_all(d.path / "src");
    write(d.path / "src/oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
    auto cfg = blob("{}");
    cfg["mediaType"] = "application/vnd.oci.image.config.v1+json";
    nlohmann::json m = manifest;
    m["config"] = cfg;
    m["layers"] = nlohmann::json::array();
    auto desc = blob(m.dump());
    desc["mediaType"] = type;
    desc["annotations"] = {{"org.opencontainers.image.ref.name", "t"}};
    write(d.path / "src/index.json", nlohmann::json{{"schemaVersion", 2}, {"manifests", {desc}}}.dump());
    return desc["digest"].get<std::string>();
  };
  std::string src = "oci:" + (d.path / "src").string() + ":t", dst = "oci:" + (d.path / "dst").string() + ":t";
  const std::string oci = "application/vnd.oci.image.manifest.v1+json";
  auto v1 = layout({{"schemaVersion", 1}, {"mediaType", oci}}, oci);
  check_refused(cli({"copy", src, dst}), "manifest " + v1 + ": expected \"schemaVersion\": 2, found 1");
  CHECK(!fs::exists(d.path / "dst/index.json"));
  auto odd = layout({{"schemaVersion", 2}, {"mediaType", "application/vnd.example.thing+json"}}, oci);
  check_refused(cli({"copy", src, dst}), "manifest " + odd + ": expected \"mediaType\" " + oci);
  CHECK(!fs::exists(d.path / "dst/index.json"));
  layout({{"schemaVersion", 2}, {"mediaType", oci}}, oci);
  auto ok = cli({"copy", src, dst});
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(fs::exists(d.path / "dst/index.json"));
}

TEST_CASE("files: an error about a file names that file") {
  fx::ScratchDir d("bad-files");
  write(d.path / "shard1/nightly.json", R"({"kind": "imgtool-nightly-report", "cells": [{"tag": "a"}], "ok": tr)");
  std::string file = (d.path / "shard1/nightly.json").string();
  check_refused(cli({"nightly", "merge", (d.path / "shard1").string(), "--report", (d.path / "out").string()}),
                file + ":1:69: expected a nightly report in JSON, found syntax error");
  write(d.path / "shard1/nightly.json", R"({"cells": {"tag": "a"}})");
  check_refused(cli({"nightly", "merge", (d.path / "shard1").string(), "--report", (d.path / "out").string()}),
                file + ": nightly report: field 'kind' expected imgtool-nightly-report");
  CHECK(!fs::exists(d.path / "out"));
}

TEST_CASE("an unknown subcommand says which word was not known") {
  check_refused(cli({"verfiy", "docker://localhost/a:b"}), "unknown subcommand 'verfiy': expected one of build, copy,");
  CHECK(cli({"--version"}).exit_code == 0);
}

TEST_CASE("plan --emit and nightly --shard/--kb-index/collect: bad input is one line, exit 2, nothing written") {
  fx::ScratchDir d("bad-plan");
  std::string m = fx::source_dir() + "/matrix/paddle.yaml";
  auto out = (d.path / "out").string();
  check_refused(cli({"plan", m, "--emit", "jenkins", "--out", out}),
                "--emit: expected github, gitlab, bake or k8s, found 'jenkins'");
  check_refused(cli({"plan", m, "--out", out}), "plan: expected --emit github, gitlab, bake or k8s, found none");
  check_refused(cli({"plan", m, "--emit", "k8s", "--out", out}),
                "plan --emit k8s: expected --registry HOST[:PORT]/NAMESPACE");
  check_refused(cli({"plan", m, "--emit", "github", "--out", out, "--shards", "0"}),
                "--shards: expected a number of runners >= 1, found 0");
  check_refused(
      cli({"plan", m, "--emit", "k8s", "--registry", "registry.example.com/ai", "--out", out, "--no-resolve"}),
      "plan --emit k8s: cell '2.6.2-gpu-cuda11.2-cudnn8.2-trt8.0' has no digest");
  CHECK_FALSE(fs::exists(out));
  for (auto bad : {"3/2", "0/4", "1-2", "x/y"})
    check_refused(cli({"nightly", m, "--registry", "127.0.0.1:5000/ai", "--key", (d.path / "k.key").string(),
                       "--report", (d.path / "r").string(), "--state", (d.path / "state").string(), "--shard", bad}),
                  "--shard: expected ");
  CHECK_FALSE(fs::exists(d.path / "r"));
  // An unset CI variable is no staging registry: refused, not published straight to release.
  check_refused(cli({"nightly", m, "--registry", "127.0.0.1:5000/ai", "--key", (d.path / "k.key").string(), "--report",
                     (d.path / "r").string(), "--state", (d.path / "state").string(), "--stage-repository", ""}),
                "--stage-repository: expected HOST[:PORT]/NAMESPACE, found an empty value (an unset variable?)");
  CHECK_FALSE(fs::exists(d.path / "r"));
  check_refused(
      cli({"nightly", m, "--registry", "127.0.0.1:5000/ai", "--key", (d.path / "k.key").string(), "--report",
           (d.path / "r").string(), "--state", (d.path / "state").string(), "--kb-index", "http://mirror.example"}),
      "--kb-index: expected https (plain http only to a loopback mirror: 127.0.0.1, localhost, [::1]), found "
      "'http://mirror.example'");
  CHECK_FALSE(fs::exists(d.path / "r"));
  CHECK_FALSE(fs::exists(d.path / "state"));
  check_refused(cli({"nightly", "collect", (d.path / "x.json").string(), "--report", (d.path / "r").string()}),
                "nightly collect: expected RESULT.json… --from-report DIR --report OUT");
  CHECK_FALSE(fs::exists(
      d.path /
      "r"));  // A --from-report folder that is missing or holds `{}`: refused before OUT is made (issue 33 item 7).
  std::string res = write(d.path / "res/x.json", "{}");
  check_refused(cli({"nightly", "collect", res, "--from-report", (d.path / "nowhere").string(), "--report",
                     (d.path / "r").string()}),
                "expected a nightly report folder (nightly.json), found none");
  write(d.path / "empty/nightly.json", "{}");
  check_refused(cli({"nightly", "collect", res, "--from-report", (d.path / "empty").string(), "--report",
                     (d.path / "r").string()}),
                "nightly.json: nightly report: field 'kind' expected imgtool-nightly-report");
  CHECK_FALSE(fs::exists(d.path / "r"));
}

TEST_CASE("imgtool evidence: a document that is not an object, or nested 300 KB deep, is one line and exit 2") {
  fx::ScratchDir d("bad-evidence");
  check_refused(cli({"evidence", write(d.path / "a.json", "[1,2,3]")}),
                "a.json: expected the probe's JSON document (an object), found a JSON array");
  check_refused(cli({"evidence", write(d.path / "deep.json", std::string(150000, '[') + std::string(150000, ']'))}),
                "deep.json:1:101: expected the probe's JSON document in JSON nested at most 100 levels deep");
}

TEST_CASE("generated folders are input: a hostile cell.json is refused before a log, an image or bake.sh is made") {
  fx::ScratchDir d("bad-cell");
  auto gen = [&](const std::string& name, const std::string& tag, const std::string& stage_key) {
    nlohmann::json j = {{"cell", {{"tag", tag}, {"repository", "paddle"}, {"variant", "cpu"}}},
                        {"inputs_hash", sha256_digest(tag)},
                        {"kb_version", "t"},
                        {"build", {{"stage", "build"}, {"stage_key", stage_key}}}};
    write(d.path / name / "c" / "cell.json", j.dump());
    write(d.path / name / "c" / "Dockerfile", "FROM scratch AS build\nFROM build\n");
    return (d.path / name).string();
  };
  fs::path pwned = d.path / "pwned";
  auto out = (d.path / "out").string();
  // Before: bake.sh got the line `bake bake-$(touch …/pwned).json …`, run by whoever ran bake.sh.
  check_refused(
      cli({"plan", gen("key", "3.2.0-cpu", "$(touch " + pwned.string() + ")"), "--emit", "bake", "--out", out}),
      "build.stage_key: expected 12 lowercase hex digits or none, found '$(touch " + pwned.string() + ")'");
  CHECK_FALSE(fs::exists(out));
  CHECK_FALSE(fs::exists(pwned));
  // Before: the build's log was written to <state>/logs/../../x.log, outside the state folder.
  auto state = d.path / "deep" / "state";
  check_refused(cli({"build", gen("tag", "../../x", "0123456789ab"), "--state", state.string()}),
                "cell.tag: expected a Docker tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}), found '../../x'");
  CHECK_FALSE(fs::exists(state.parent_path() / "x.log"));  // <state>/logs/../../x.log
}

namespace {

// No control character but newline and tab (ESC, BEL, NUL… would repaint a terminal or make XML ill-formed).
bool no_raw_controls(const std::string& text) {
  return std::none_of(text.begin(), text.end(), [](char ch) {
    auto c = static_cast<unsigned char>(ch);
    return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
  });
}

// python3's xml.etree reads `file` (a well-formed XML document), or says why not.
RunResult parse_xml(const fs::path& file) {
  return imgtool::run({"python3", "-c", "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])", file.string()});
}

}  // namespace

TEST_CASE("control characters in a shard report reach neither the terminal nor report.md/html/junit.xml raw") {
  fx::ScratchDir d("ctl-report");
  std::string esc = "\u001b[2J\u001b]0;owned\u0007";  // clear the screen, retitle the terminal, bell
  nlohmann::json cell = {
      {"tag", "3.2.0-cpu"},
      {"image", "paddle:3.2.0-cpu" + esc},
      {"build", {{"status", "built"}, {"error", ""}}},
      {"smoke", {{"status", "fail"}, {"reasons", {std::string("paddle: import failed \0 here", 28) + esc}}}},
      {"gate", {{"status", "skipped"}, {"error", "smoke did not pass" + esc}}},
      {"publish", {{"status", "failed"}, {"digest", "sha256:" + esc}, {"error", "HTTP 403 DENIED: " + esc}}}};
  nlohmann::json report = {{"kind", "imgtool-nightly-report"},
                           {"kb", {{"version", "2026.11.3" + esc}}},
                           {"cells", nlohmann::json::array({cell})}};
  write(d.path / "shard" / "nightly.json", report.dump());
  auto out = d.path / "merged";
  auto r = cli({"nightly", "merge", (d.path / "shard").string(), "--report", out.string()});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);                // the cell failed
  CHECK(no_raw_controls(r.out + r.err));  // before: the summary printed ESC sequences and BEL as they were
  CHECK(r.out.find("sha256:\\x1b[2J\\x1b]0;owned\\x07") != std::string::npos);
  for (auto name : {"report.md", "report.html", "junit.xml"}) {
    CAPTURE(name);
    std::string text = read_file(out / name);
    CHECK(no_raw_controls(text));  // before: ESC, BEL and NUL as they were
    CHECK(text.find("\\x1b[2J") != std::string::npos);
  }
  auto xml = parse_xml(out / "junit.xml");
  CHECK_MESSAGE(xml.exit_code == 0, xml.err);  // before: "not well-formed (invalid token)"

  // A tag with ESC is refused as the report is read; the message shows it escaped.
  cell["tag"] = "3.2.0\u001b[2J";
  report["cells"] = nlohmann::json::array({cell});  // not {cell}: under clang a copy of cell, not an array
  write(d.path / "evil" / "nightly.json", report.dump());
  auto t = cli({"nightly", "merge", (d.path / "evil").string(), "--report", (d.path / "m2").string()});
  check_refused(t, "cell tag: expected a Docker tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}), found '3.2.0\\x1b[2J'");
  CHECK(no_raw_controls(t.err));
}

TEST_CASE("folders: a --state folder others can write is refused, naming it and the fix") {
  fx::ScratchDir d("bad-state");
  fs::path state = d.path / "state";
  fs::create_directories(state);
  fs::permissions(state, fs::perms::all);  // 0777: anyone could plant generated Dockerfiles or a lock
  auto r = cli({"build", fx::source_dir() + "/matrix/local.yaml", "--state", state.string()});
  check_refused(
      r, state.string() + ": expected a folder only its owner can write (mode 0700), found mode 0777; fix: chmod 700");
  CHECK(fs::is_empty(state));  // nothing written into it
}
