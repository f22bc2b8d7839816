// The SBOM end to end, with real components: a real docker-registry on
// loopback, the real Paddle CPU test image (tests/test_images.h), the nightly's
// publish path (release::publish: by digest, signed, SBOM attested, tag last), the imgtool
// binary for verify/sbom, spdx-tools (pyspdxtools, scripts/install-deps.sh) for
// the SPDX validation, and `dpkg-query` / `pip list` run INSIDE the image as
// the cross-check of what the layers say.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "core/fs.h"
#include "image/copy.h"
#include "image/daemon_transport.h"
#include "image/docker_transport.h"
#include "image/registry.h"
#include "image/registry_repository.h"
#include "matrix/kb.h"
#include "release/publish.h"
#include "sbom/inventory.h"
#include "sbom/publish.h"
#include "sign/attestation.h"
#include "sign/keys.h"
#include "tests/fixtures.h"
#include "tests/registry_fixture.h"
#include "tests/test_images.h"
#include "verify/release_gate.h"

using namespace imgtool;
using namespace imgtool::testing;
using nlohmann::json;

namespace {

RunResult cli(const std::vector<std::string>& args) {
  RunResult r = imgtool::testing::imgtool(args);
  MESSAGE("imgtool " << args[0] << " -> " << r.exit_code << "\n" << r.out << r.err);
  return r;
}

std::string pyspdxtools() {
  return env_or("IMGTOOL_CACHE", env_or("HOME", "/tmp") + "/.cache/imgtool") + "/venv-spdx/bin/pyspdxtools";
}

// release::publish as the nightly calls it (without the gate's inventory: the SBOM is read from the
// local image's layers): copy by digest, sign, attest the SBOM, move the tag.
release::PublishResult publish(std::shared_ptr<image::Registry> reg, const std::string& repo, const std::string& local,
                               const std::string& tag, EVP_PKEY& key) {
  image::RegistryRepository srepo(reg, repo);
  image::DaemonSource src(local);
  return release::publish(srepo, key, {.image = &src, .tag = tag});
}

std::string row(const json& report, const std::string& id) {
  for (const auto& c : report["checks"])
    if (c["id"] == id) return c["status"].get<std::string>() + ": " + c["found"].get<std::string>();
  return "absent";
}

// name@version of the SBOM's packages of one purl type ("deb", "pypi"), optionally under one site-packages.
std::set<std::string> sbom_set(const json& doc, const std::string& type, const std::string& site = "") {
  std::set<std::string> out;
  for (const auto& p : doc["packages"]) {
    std::string loc =
        p.value("externalRefs", json::array()).empty() ? "" : p["externalRefs"][0].value("referenceLocator", "");
    if (loc.rfind("pkg:" + type + "/", 0) != 0) continue;
    if (!site.empty() && p.value("comment", "") != "site-packages: " + site) continue;
    std::string name = p["name"];
    if (type == "pypi") name = sbom::canonical_python_name(name);
    out.insert(name + "@" + p["versionInfo"].get<std::string>());
  }
  return out;
}

std::set<std::string> dpkg_in_image(const std::string& img) {
  auto r = run({"docker", "run", "--rm", "--network", "none", "--entrypoint", "dpkg-query", img, "-W", "-f",
                "${db:Status-Status}\t${Package}\t${Version}\n"});
  REQUIRE_MESSAGE(r.ok(), r.err);
  std::set<std::string> out;
  std::istringstream in(r.out);
  std::string status, name, version;
  while (std::getline(in, status, '\t') && std::getline(in, name, '\t') && std::getline(in, version))
    if (status == "installed") out.insert(name + "@" + version);
  return out;
}

std::set<std::string> pip_in_image(const std::string& img, const std::string& python) {
  auto r = run({"docker", "run", "--rm", "--network", "none", "--entrypoint", python, img, "-m", "pip", "list",
                "--format", "json", "--disable-pip-version-check"});
  REQUIRE_MESSAGE(r.ok(), r.err);
  std::set<std::string> out;
  for (const auto& p : json::parse(r.out))
    out.insert(sbom::canonical_python_name(p["name"]) + "@" + p["version"].get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("publish with the SBOM attestation, verify, spdx-tools, dpkg/pip cross-check, tampering") {
  RegistryServer server;
  ScratchDir d("sbom-e2e");
  auto reg = std::make_shared<image::Registry>(server.host(), server.options());
  std::string k = (d.path / "release").string();
  REQUIRE(cli({"keygen", "--out", k}).ok());
  sign::Pkey key = sign::load_private_key(k + ".key", "");
  std::string img = paddle_cpu_image();
  std::string small = labelled("imgtool-test/sbom-small:cpu", base_image(), "cpu");
  std::string repo = "ai/paddle", ref = "docker://" + server.host() + "/" + repo;

  release::PublishResult pub = publish(reg, repo, img, "3.3.1-cpu", *key);
  release::PublishResult other = publish(reg, repo, small, "small", *key);
  image::RegistryRepository srepo(*reg, repo);
  REQUIRE(srepo.manifest(sign::attestation_tag(pub.digest)));  // attached before the tag moved

  auto verify = [&](const std::string& r) {
    auto res =
        cli({"verify", r, "--key", k + ".pub", "--no-smoke", "--no-claims", "--json"});  // claims: verify's own tests
    return std::make_pair(res.exit_code, json::parse(res.out.empty() ? "{}" : res.out));
  };

  // One registry and one publish for all steps, in order (doctest SUBCASEs would re-publish each time).
  {
    INFO("verify passes; sbom prints the attested document; spdx-tools validates it; it matches the image");
    auto [rc, report] = verify(ref + ":3.3.1-cpu");
    CHECK(rc == 0);
    CHECK(row(report, "sbom.attestation").rfind("pass", 0) == 0);
    CHECK(row(report, "sbom.document").rfind("pass", 0) == 0);
    CHECK(row(report, "sbom.packages").rfind("pass", 0) == 0);

    std::string out = (d.path / "paddle.spdx.json").string();
    REQUIRE(cli({"sbom", ref + ":3.3.1-cpu", "--key", k + ".pub", "--out", out}).ok());
    json doc = json::parse(read_file(out));
    auto v = run({pyspdxtools(), "-i", out});
    INFO("pyspdxtools (scripts/install-deps.sh installs it): " << v.out << v.err);
    CHECK(v.ok());

    // Every installed dpkg package, exactly; the venv's pip list, exactly (names canonical).
    std::set<std::string> debs = dpkg_in_image(img);
    CHECK(debs.size() > 50);
    CHECK(sbom_set(doc, "deb") == debs);
    std::set<std::string> pips = pip_in_image(img, "/opt/venv/bin/python3");
    CHECK(pips.count("paddlepaddle@3.3.1") == 1);
    CHECK(sbom_set(doc, "pypi", "/opt/venv/lib/python3.11/site-packages") == pips);

    // Built on the fly from the local engine: the same packages as the attested one.
    std::string local = (d.path / "local.spdx.json").string();
    REQUIRE(cli({"sbom", "docker-daemon:" + img, "--out", local}).ok());
    json ldoc = json::parse(read_file(local));
    CHECK(sbom_set(ldoc, "deb") == sbom_set(doc, "deb"));
    CHECK(sbom_set(ldoc, "pypi") == sbom_set(doc, "pypi"));
    CHECK(run({pyspdxtools(), "-i", local}).ok());
  }

  {
    INFO("no attestation: verify fails with the fix; sbom says none");
    std::string bare = labelled("imgtool-test/sbom-bare:cpu", base_image(), "cpu");  // a digest of its own
    auto r = cli({"copy", "docker-daemon:" + bare, ref + ":bare", "--json"});
    REQUIRE(r.ok());
    std::string bare_digest = json::parse(r.out)["digest"];
    REQUIRE(cli({"sign", ref + ":bare", "--key", k + ".key", "--no-sbom"}).ok());
    auto [rc, report] = verify(ref + ":bare");
    CHECK(rc == 1);
    CHECK(row(report, "signature").rfind("pass", 0) == 0);
    CHECK(row(report, "sbom.attestation").rfind("fail: no attestation", 0) == 0);
    CHECK(cli({"sbom", ref + ":bare"}).exit_code == 1);
    auto bad = cli({"sbom", "docker-daemon:" + small, "--created", "yesterday", "--out", (d.path / "x.json").string()});
    CHECK(bad.exit_code == 2);  // bad input: one line naming the flag, nothing written
    CHECK(bad.err.find("--created: expected a UTC time") != std::string::npos);
    CHECK_FALSE(fs::exists(d.path / "x.json"));
    // promote refuses to move a tag onto it (no tag without its SBOM) ...
    auto p = cli({"promote", ref + "@" + bare_digest, "--tag", "stable", "--key", k + ".pub", "--no-verify-contents"});
    CHECK(p.exit_code == 1);
    CHECK(p.err.find("expected an attestation") != std::string::npos);
    CHECK_FALSE(reg->head_manifest(repo, "stable").has_value());
    // ... imgtool sign attaches it by default: then verify passes and promote moves the tag.
    REQUIRE(cli({"sign", ref + ":bare", "--key", k + ".key"}).ok());
    CHECK(verify(ref + ":bare").first == 0);
    CHECK(cli({"promote", ref + "@" + bare_digest, "--tag", "stable", "--key", k + ".pub", "--no-verify-contents",
               "--any-tag-of-repository"})
              .ok());  // signed as :bare: the policy's identity is widened for the new tag
    CHECK(reg->resolve(repo, "stable") == bare_digest);

    // Staging -> release: promoted across repositories (never rebuilt): blobs mounted, attested
    // and signed for the release repository, then tagged; verify passes there with the key.
    std::string release = "docker://" + server.host() + "/release/paddle";
    auto refused = cli({"promote", ref + "@" + bare_digest, "--to", release, "--tag", "1.0", "--key", k + ".pub"});
    CHECK(refused.exit_code == 2);  // no --sign-key: one line, nothing copied
    CHECK(refused.err.find("expected --sign-key") != std::string::npos);
    auto across = cli({"promote", ref + "@" + bare_digest, "--to", release, "--tag", "1.0", "--key", k + ".pub",
                       "--sign-key", k + ".key", "--no-verify-contents"});
    REQUIRE(across.ok());
    CHECK(across.out.find(" 0 byte(s) uploaded") != std::string::npos);  // every layer mounted from ai/paddle
    CHECK(reg->resolve("release/paddle", "1.0") == bare_digest);
    auto [rel_rc, rel] = verify(release + ":1.0");
    CHECK(rel_rc == 0);
    CHECK(row(rel, "sbom.attestation").rfind("pass", 0) == 0);
    CHECK(row(rel, "sbom.packages").rfind("pass", 0) == 0);
  }
  {
    INFO("a signed SBOM that leaves a package out fails, naming it");
    image::DockerSource src(reg, repo, pub.digest);
    image::Manifest m = reg->get_manifest(repo, pub.digest);
    nlohmann::ordered_json doc = sbom::sbom_of(src, m, srepo.name(), pub.digest).to_json();
    std::string dropped;
    auto& ps = doc["packages"];
    for (auto it = ps.begin(); it != ps.end(); ++it)
      if ((*it)["name"] == "libc6") {
        dropped = (*it)["externalRefs"][0]["referenceLocator"];
        ps.erase(it);
        break;
      }
    REQUIRE(!dropped.empty());
    sign::attach_attestation(srepo, *key, {pub.digest, "", sign::kSpdxPredicateType, doc});
    auto [rc, report] = verify(ref + ":3.3.1-cpu");
    CHECK(rc == 1);
    CHECK(row(report, "sbom.attestation").rfind("pass", 0) == 0);
    CHECK(row(report, "sbom.packages").find("missing from the SBOM: " + dropped) != std::string::npos);
  }

  {
    INFO("another image's attestation under this digest's tag fails on the subject");
    auto theirs = srepo.manifest(sign::attestation_tag(other.digest));
    REQUIRE(theirs);
    srepo.put_manifest(*theirs, sign::attestation_tag(pub.digest));
    auto [rc, report] = verify(ref + ":3.3.1-cpu");
    CHECK(rc == 1);
    CHECK(row(report, "sbom.attestation").find("another image") != std::string::npos);
    CHECK(cli({"sbom", ref + ":3.3.1-cpu", "--key", k + ".pub"}).exit_code == 1);
  }
}

// The nightly's gate reads a built image once: every layer the docker save stream carries is
// scanned as it goes by (no inflate of what was just compressed); with the layers already in the
// cache, nothing is saved and they are read from it. Both reads give the same rows and the same
// inventory (the SBOM publish attests).
TEST_CASE("the release gate scans a saved image's layers from the save stream, once") {
  ScratchDir d("gate-once");
  std::string img = ensure_image("imgtool-test/gate-once:3.3.1",
                                 "FROM " + paddle_cpu_image() +
                                     "\nLABEL io.imgtool.paddle=3.3.1 io.imgtool.python=3.11 io.imgtool.variant=cpu "
                                     "io.imgtool.tag=3.3.1\n",
                                 d.path.string());
  auto kb = matrix::KnowledgeBase::load_default();
  auto gate = [&] {
    image::DaemonSource src(img, {.cache_root = (d.path / "layers").string()});
    return verify::release_gate(
        {.ref = "docker-daemon:" + img, .source = &src, .tag = "3.3.1", .kb = &kb, .inventory = true});
  };
  verify::GateResult cold = gate();
  verify::GateResult warm = gate();
  size_t layers = warm.layer_reads.from_source;
  CHECK(layers >= 2);
  CHECK(cold.layer_reads.as_saved == layers);
  CHECK(cold.layer_reads.from_source == 0);
  CHECK(warm.layer_reads.as_saved == 0);
  REQUIRE(cold.inventory);
  REQUIRE(warm.inventory);
  auto names = [](const sbom::Inventory& inv) {
    std::vector<std::string> out;
    for (const auto& p : inv.debs) out.push_back("deb " + p.name + "@" + p.version);
    for (const auto& p : inv.python) out.push_back("py " + p.name + "@" + p.version + " " + p.site);
    for (const auto& p : inv.nvidia) out.push_back("nv " + p.name + "@" + p.version);
    return out;
  };
  CHECK(names(*cold.inventory).size() > 20);
  CHECK(names(*cold.inventory) == names(*warm.inventory));
  auto rows = [](const verify::GateResult& g) {
    std::vector<std::string> out;
    for (const auto& c : g.report.checks) out.push_back(c.id + " " + verify::status_name(c.status) + " " + c.found);
    return out;
  };
  CHECK(rows(cold) == rows(warm));
  for (const auto& c : cold.report.checks) CHECK_MESSAGE(c.status != verify::Status::kFail, c.id << ": " << c.found);
  auto found = [&](const std::string& id) {  // read off the layers
    for (const auto& c : cold.report.checks)
      if (c.id == id) return c.found;
    return std::string("absent");
  };
  CHECK(found("claims.paddle") == "paddlepaddle 3.3.1");
}
