// The builder against the real Docker engine: a small matrix from the local
// base image and the local wheelhouse (real paddlepaddle CPU wheel), generated
// by the real generator, built by `imgtool build`. The test cases run in file
// order and share one state folder and its images (a paddle wheel install
// costs about a minute per image, so each is built once).
//
// Cells (all Python 3.11 on imgtool-base/debian:bookworm-py3, one shared first stage):
//   it-cpu          cpu variant, CPU wheel: builds
//   it-gpu-cpuwheel gpu variant carrying the CPU wheel: builds (smoke must fail it later)
//   it-broken       uid override 0: `useradd --uid 0` fails in a RUN step: fails alone
//   it-lying        cpu, labelled Paddle 3.1.0 but installs 3.3.1: builds, its smoke document
//                   (Paddle 3.3.1 vs the label) fails its smoke (smoke/binding.h); never published
// The nightly cases then publish to a real loopback docker-registry
// (tests/registry_fixture.h) with a real key: only the passing cell is pushed.
#include <doctest/doctest.h>

#include <regex>
#include <set>
#include <sstream>

#include "builder/generated_cell.h"
#include "core/fs.h"
#include "dockerfiles/generate.h"
#include "engine/engine.h"
#include "image/registry.h"
#include "matrix/testing/cells.h"
#include "nightly/nightly_steps_real.h"
#include "sign/keys.h"
#include "tests/fixtures.h"
#include "tests/registry_fixture.h"
#include "tests/source_kb.h"

using namespace imgtool;
using namespace imgtool::testing;
namespace bt = imgtool::builder;

namespace {

matrix::Cell local_cell(const std::string& tag, const std::string& variant) {
  matrix::Cell c = matrix::testing::cell(tag, variant);  // a gpu one: CUDA 12.6, driver 525.60.13
  c.repository = "imgtool-it/paddle";
  c.paddle = "3.3.1";
  c.base_image = base_image();
  c.pip_requirement = "paddlepaddle==3.3.1";
  c.wheelhouse = wheelhouse();
  return c;
}

// One state folder and one generated folder for the whole binary.
struct Shared {
  ScratchDir scratch{"builder-it"};
  fs::path gen = scratch.path / "gen";
  fs::path state = scratch.path / "state";
  Shared() {
    auto broken = local_cell("it-broken", "cpu");
    broken.overrides["uid"] = "0";
    auto lying = local_cell("it-lying", "cpu");
    lying.paddle = "3.1.0";  // the claim; pip_requirement still installs 3.3.1
    dockerfiles::generate({local_cell("it-cpu", "cpu"), local_cell("it-gpu-cpuwheel", "gpu"), broken, lying},
                          {.out_dir = gen, .kb_version = "it"});
  }
  // The state is scratch, so the next run builds them again: nothing to share, 2.6 GB to give back.
  ~Shared() {
    for (const char* tag : {"it-cpu", "it-gpu-cpuwheel", "it-lying", "it-broken"})
      run({"docker", "rmi", "-f", std::string("imgtool-it/paddle:") + tag});
  }
};

Shared& shared() {
  static Shared s;
  return s;
}

std::string last_stderr;  // of the last build()

nlohmann::json build(const std::vector<std::string>& extra, int expect_rc) {
  std::vector<std::string> args = {"build",   shared().gen.string(),   "-j",    "2",
                                   "--state", shared().state.string(), "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = imgtool::testing::imgtool(args);
  INFO("stderr: " << r.err);
  last_stderr = r.err;
  REQUIRE(r.exit_code == expect_rc);
  return nlohmann::json::parse(r.out);
}

nlohmann::json cell(const nlohmann::json& rep, const std::string& tag) {
  for (auto& c : rep["cells"])
    if (c["tag"] == tag) return c;
  FAIL("no cell " << tag << " in the report");
  return {};
}

// In a classic-builder log: the line after the step whose instruction matches `step`.
std::string line_after_step(const std::string& log, const std::string& step) {
  auto at = log.find(step);
  if (at == std::string::npos) return "";
  auto nl = log.find('\n', at);
  auto end = log.find('\n', nl + 1);
  return log.substr(nl + 1, end - nl - 1);
}

}  // namespace

TEST_CASE("build: good cells build, the broken cell fails alone, exit 1 and the summary names it") {
  auto rep = build({}, 1);
  CHECK(cell(rep, "it-cpu")["status"] == "built");
  // Progress: not a terminal, so plain lines, one per step change of each build (no escapes).
  INFO("build stderr: " << last_stderr);
  CHECK(last_stderr.find("build: build it-cpu: step ") != std::string::npos);
  CHECK(last_stderr.find("\033[") == std::string::npos);
  CHECK(cell(rep, "it-gpu-cpuwheel")["status"] == "built");
  auto broken = cell(rep, "it-broken");
  CHECK(broken["status"] == "FAILED");
  CHECK(broken["attempts"] == 1);  // deterministic: never retried
  CHECK(broken["error"].get<std::string>().find("non-zero code") != std::string::npos);
  // The label contract: the inputs hash is on the image.
  auto id = run({"docker", "image", "inspect", "-f", "{{ index .Config.Labels \"io.imgtool.inputs-hash\" }}",
                 "imgtool-it/paddle:it-cpu"});
  CHECK(id.out.substr(0, 7) == "sha256:");
  CHECK(id.out.find(cell(rep, "it-cpu")["inputs_hash"].get<std::string>()) == 0);
}

TEST_CASE("build: the shared first stage is built once and every cell reuses its layers from the cache") {
  auto groups = std::set<std::string>();
  auto rep = build({"--only", "it-cpu,it-gpu-cpuwheel", "--force", "--quiet"}, 0);
  CHECK(last_stderr.find(": step ") == std::string::npos);  // --quiet: no progress lines
  for (auto& c : rep["cells"]) groups.insert(c["stage_group"].get<std::string>());
  CHECK(groups.size() == 1);
  // The expensive step of the first stage (the wheel install) came from the cache in both cells.
  for (const char* tag : {"it-cpu", "it-gpu-cpuwheel"}) {
    std::string log = read_file(cell(rep, tag)["log"].get<std::string>());
    INFO(tag << " log:\n" << log.substr(0, 4000));
    CHECK(line_after_step(log, "pip install --no-cache-dir --no-index").find("Using cache") != std::string::npos);
  }
}

TEST_CASE("build: a re-run with nothing changed runs no docker build and says so") {
  std::vector<std::string> args = {"build",   shared().gen.string(),  "--only", "it-cpu,it-gpu-cpuwheel",
                                   "--state", shared().state.string()};
  auto r = imgtool::testing::imgtool(args);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("0 docker build invocation(s)") != std::string::npos);
  CHECK(r.out.find("nothing changed, nothing built") != std::string::npos);
  CHECK(r.out.find("2 up to date") != std::string::npos);
}

namespace {

// A loopback registry and a signing key for the nightly cases.
struct Publish {
  RegistryServer registry{RegistryServer::Mode::kHttp, "nightly"};
  fs::path key_prefix = shared().scratch.path / "keys" / "release";
  fs::path report = shared().scratch.path / "report";
  Publish() { sign::write_key_pair(*sign::generate_key(), key_prefix, ""); }
  RunResult nightly(const fs::path& report_dir, const std::vector<std::string>& extra = {},
                    const std::string& only = "it-cpu,it-gpu-cpuwheel") {
    std::vector<std::string> args = {"nightly",    shared().gen.string(),
                                     "--registry", registry.host() + "/ai",
                                     "--key",      key_prefix.string() + ".key",
                                     "--report",   report_dir.string(),
                                     "--state",    shared().state.string(),
                                     "-j",         "2",
                                     "--only",     only,
                                     "--gpus",     "none",
                                     "--records",  (shared().scratch.path / "records.db").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return imgtool::testing::imgtool(args);
  }
};

Publish& publish() {
  static Publish p;
  return p;
}

}  // namespace

TEST_CASE(
    "nightly: the passing cpu cell is pushed and signed; the gpu cell with the CPU wheel fails smoke, not pushed") {
  auto r = publish().nightly(publish().report);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 1);  // one cell failed its smoke
  auto rep = nlohmann::json::parse(read_file(publish().report / "nightly.json"));
  auto cpu = cell(rep, "it-cpu"), gpu = cell(rep, "it-gpu-cpuwheel");
  CHECK(cpu["smoke"]["status"] == "pass");
  CHECK(cpu["publish"]["status"] == "published");
  CHECK(cpu["layers"].size() >= 2);  // the pushed manifest's layers, for the report's sizes
  CHECK(gpu["smoke"]["status"] == "fail");
  CHECK(gpu["smoke"].dump().find("CPU-only Paddle build in a gpu image") != std::string::npos);
  CHECK(gpu["publish"]["status"] == "skipped");
  // The registry: the cpu tag names the published digest and carries its signature; no gpu tag.
  image::Registry reg(publish().registry.host());
  auto tags = reg.list_tags("ai/imgtool-it/paddle");
  std::string digest = cpu["publish"]["digest"];
  CHECK(reg.resolve("ai/imgtool-it/paddle", "it-cpu") == digest);
  CHECK(std::count(tags.begin(), tags.end(), "sha256-" + digest.substr(7) + ".sig") == 1);
  CHECK(std::count(tags.begin(), tags.end(), "it-gpu-cpuwheel") == 0);
  // Tonight's dated tag names the same digest (what `imgtool prune --keep N` ages out).
  std::string dated = cpu["publish"]["dated_tag"];
  CHECK(dated.rfind("it-cpu-nightly-", 0) == 0);
  CHECK(reg.resolve("ai/imgtool-it/paddle", dated) == digest);
  // The signature verifies with the public key (imgtool verify, static checks only).
  auto v = imgtool::testing::imgtool(
      {"verify",
       nightly::cell_reference(nightly::parse_registry(publish().registry.host() + "/ai"), local_cell("it-cpu", "cpu"))
           .str(),
       "--key", publish().key_prefix.string() + ".pub", "--no-smoke", "--no-claims"});
  INFO("verify: " << v.out << v.err);
  CHECK(v.exit_code == 0);
  // The report folder.
  for (const char* f : {"report.md", "report.html", "junit.xml", "logs/it-cpu.log"})
    CHECK(fs::exists(publish().report / f));
  CHECK(read_file(publish().report / "junit.xml").find("failures=\"1\"") != std::string::npos);
}

TEST_CASE("nightly: nothing changed → no docker build, cpu smoke reused, publish unchanged; shard reports merge") {
  auto t0 = std::chrono::steady_clock::now();
  auto r1 = publish().nightly(shared().scratch.path / "s1", {"--shard", "1/2"});
  auto r2 = publish().nightly(shared().scratch.path / "s2", {"--shard", "2/2"});
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("no-op nightly (2 shards, 2 cells, gpu cell's failing smoke re-run): " << secs << " s");
  auto a = nlohmann::json::parse(read_file(shared().scratch.path / "s1" / "nightly.json"));
  auto b = nlohmann::json::parse(read_file(shared().scratch.path / "s2" / "nightly.json"));
  CHECK(a["docker_builds"].get<int>() + b["docker_builds"].get<int>() == 0);
  CHECK(a["cells"].size() + b["cells"].size() == 2);
  auto m = imgtool::testing::imgtool({"nightly", "merge", (shared().scratch.path / "s1").string(),
                                      (shared().scratch.path / "s2").string(), "--report",
                                      (shared().scratch.path / "merged").string()});
  INFO("merge: " << m.out << m.err);
  CHECK(m.exit_code == 1);  // the gpu cell still fails
  auto merged = nlohmann::json::parse(read_file(shared().scratch.path / "merged" / "nightly.json"));
  CHECK(cell(merged, "it-cpu")["smoke"]["status"] == "cached");
  CHECK(cell(merged, "it-cpu")["publish"]["status"] == "unchanged");
  // The report: nothing changed since the first run on this state; the unchanged cell's size is read back.
  CHECK(cell(merged, "it-cpu")["changes"] == nlohmann::json::array({"unchanged"}));
  CHECK(cell(merged, "it-cpu")["layers"].size() >= 2);
  CHECK(read_file(shared().scratch.path / "merged" / "report.html").find("Layers across the matrix") !=
        std::string::npos);
  CHECK(cell(merged, "it-gpu-cpuwheel")["publish"]["status"] == "skipped");
}

TEST_CASE(
    "nightly: a cell whose contents contradict its labels is stopped at its smoke (the probe's document contradicts "
    "the labels: smoke/binding.h), never published") {
  auto dir = shared().scratch.path / "lying";
  auto r = publish().nightly(dir, {}, "it-lying");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 1);
  auto lying = cell(nlohmann::json::parse(read_file(dir / "nightly.json")), "it-lying");
  // Paddle itself says which version runs; the label says another: no evidence of this image, no gate, no tag.
  CHECK(lying["smoke"]["status"] == "fail");
  CHECK(lying["smoke"]["reasons"].dump().find("binding: paddle: the document says '3.3.1', the image claims") !=
        std::string::npos);
  CHECK(lying["gate"]["status"] == "skipped");
  CHECK(lying["publish"]["status"] == "skipped");
  image::Registry reg(publish().registry.host());
  auto tags = reg.list_tags("ai/imgtool-it/paddle");
  CHECK(std::count(tags.begin(), tags.end(), "it-lying") == 0);
  CHECK(read_file(dir / "report.md").find("binding: paddle") != std::string::npos);
}

TEST_CASE("nightly publish: a re-tag between smoke and publish is never pushed nor signed (the image is read by ID)") {
  const std::string name = "imgtool-it/paddle:it-cpu";
  std::string id = run({"docker", "image", "inspect", "-f", "{{.Id}}", name}).out;
  id = id.substr(0, id.find_first_of("\r\n"));
  REQUIRE(id.rfind("sha256:", 0) == 0);
  auto g = bt::load_generated_cell(shared().gen / "it-cpu");
  bt::CellBuild b;
  b.tag = "it-cpu";
  b.image = name;
  b.image_id = id;  // what the smoke ran
  // Another nightly (or a person) re-tags the name after the smoke.
  REQUIRE(run({"docker", "tag", base_image(), name}).exit_code == 0);
  struct Restore {
    std::string id, name;
    ~Restore() { run({"docker", "tag", id, name}); }
  } restore{id, name};
  auto target = nightly::parse_registry(publish().registry.host() + "/race");
  auto steps = nightly::make_real_steps({.target = target,
                                         .key = publish().key_prefix.string() + ".key",
                                         .engine = &engine::local_engine(),
                                         .kb = &source_kb()});
  auto out = steps->publish(g, b, nullptr, nullptr);
  image::Registry reg(publish().registry.host());
  auto m = reg.get_manifest("race/imgtool-it/paddle", "it-cpu");
  CHECK(m.digest() == out.digest);
  CHECK(m.config().digest == id);  // the smoked image, not what the name names now
  auto tags = reg.list_tags("race/imgtool-it/paddle");
  CHECK(std::count(tags.begin(), tags.end(), "sha256-" + out.digest.substr(7) + ".sig") == 1);
  // Nothing else was signed: the re-tagged image (the base) has no manifest, let alone a signature, here.
  for (auto& t : tags)
    if (t.size() > 4 && t.compare(t.size() - 4, 4, ".sig") == 0) CHECK(t == "sha256-" + out.digest.substr(7) + ".sig");
}

TEST_CASE("nightly --stage-repository: published to staging only; the report's promote command releases it") {
  auto dir = shared().scratch.path / "staged";
  auto r = publish().nightly(dir, {"--stage-repository", publish().registry.host() + "/staging"}, "it-cpu");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  auto rep = nlohmann::json::parse(read_file(dir / "nightly.json"));
  auto cpu = cell(rep, "it-cpu");
  std::string digest = cpu["publish"]["digest"];
  image::Registry reg(publish().registry.host());
  CHECK(reg.resolve("staging/imgtool-it/paddle", "it-cpu") == digest);
  CHECK(rep["release"] == publish().registry.host() + "/ai");
  std::string cmd = cpu["promote"];
  CHECK(cmd.find("--to docker://" + publish().registry.host() + "/ai/imgtool-it/paddle") != std::string::npos);
  CHECK(read_file(dir / "report.md").find(cmd) != std::string::npos);
  // The command as printed, with the keys filled in: the staged digest becomes the release tag.
  std::vector<std::string> args;
  std::istringstream words(cmd.substr(std::string("imgtool ").size()));
  for (std::string w; words >> w;)
    args.push_back(w == "RELEASE.pub"                        ? publish().key_prefix.string() + ".pub"
                   : w == "RELEASE.key"                      ? publish().key_prefix.string() + ".key"
                   : !args.empty() && args.back() == "--tag" ? "it-cpu-release"  // a release tag of its own
                                                             : w);
  auto p = imgtool::testing::imgtool(args);
  INFO("promote: " << p.out << p.err);
  REQUIRE(p.exit_code == 0);
  CHECK(reg.resolve("ai/imgtool-it/paddle", "it-cpu-release") == digest);
  // The whole staged report at once, as the emitted CI's promote job runs it: the cpu cell is released
  // under its own tag (a gpu cell would need hardware evidence, release/release_test.cc).
  auto all = imgtool::testing::imgtool(
      {"nightly", "promote", "--from-report", dir.string(), "--sign-key", publish().key_prefix.string() + ".key"});
  INFO("nightly promote: " << all.out << all.err);
  CHECK(all.exit_code == 0);
  CHECK(all.out.find("promoted " + publish().registry.host() + "/staging/imgtool-it/paddle@" + digest) !=
        std::string::npos);
  CHECK(reg.resolve("ai/imgtool-it/paddle", "it-cpu") == digest);
}
