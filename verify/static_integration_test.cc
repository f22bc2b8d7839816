// keygen / sign / verify --no-smoke / promote through the imgtool binary,
// against a REAL docker-registry on 127.0.0.1 and images built by the real
// Docker engine from the local base image. Fault cases: wrong key, tampered
// manifest, a signature for another digest, a truncated signature, lying labels.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "core/hash.h"
#include "image/registry.h"
#include "image/testing/python_server.h"
#include "sign/ecdsa.h"
#include "sign/sig_manifest.h"
#include "tests/fixtures.h"
#include "tests/registry_fixture.h"

using namespace imgtool;
using namespace imgtool::testing;
using nlohmann::json;

namespace {

// Builds NAME from the local base with LABELs and a fake Paddle install
// (dist-info + paddle/version/__init__.py) in Python 3.11's dist-packages.
void build_image(const std::string& name, const std::map<std::string, std::string>& labels,
                 const std::string& extra = "") {
  std::string df = "FROM " + base_image() + "\n";
  for (const auto& [k, v] : labels) df += "LABEL " + k + "=\"" + v + "\"\n";
  df +=
      "RUN d=/usr/local/lib/python3.11/dist-packages && mkdir -p $d/paddlepaddle-3.2.0.dist-info $d/paddle/version && "
      "printf 'Name: paddlepaddle\\nVersion: 3.2.0\\n' > $d/paddlepaddle-3.2.0.dist-info/METADATA && "
      "printf \"full_version = '3.2.0'\\ncuda_version = 'False'\\ncudnn_version = 'False'\\n\" > "
      "$d/paddle/version/__init__.py\n" +
      extra;
  ScratchDir ctx("ctx-" + std::to_string(std::hash<std::string>{}(name)));
  write_file_atomic(ctx.path / "Dockerfile", df);
  auto r = run({"docker", "build", "-q", "-t", name, ctx.path.string()});
  REQUIRE_MESSAGE(r.ok(), (r.out + r.err));
}

std::map<std::string, std::string> cpu_labels(const std::string& python) {
  return {{"io.imgtool.paddle", "3.2.0"}, {"io.imgtool.python", python}, {"io.imgtool.variant", "cpu"}};
}

RunResult cli(const std::vector<std::string>& args) {
  RunResult r = imgtool::testing::imgtool(args);
  MESSAGE("imgtool " << args[0] << " -> " << r.exit_code << "\n" << r.out << r.err);
  return r;
}

std::string copy_to(const std::string& local, const std::string& dst) {
  auto r = cli({"copy", "docker-daemon:" + local, dst, "--json"});
  REQUIRE(r.ok());
  return json::parse(r.out)["digest"];
}

}  // namespace

TEST_CASE("sign, verify, faults and promote against a real registry") {
  RegistryServer server(RegistryServer::Mode::kHttp, "registry", "", true, /*access_log=*/true);
  ScratchDir d("signverify");
  image::Registry reg(server.host(), server.options());
  std::string repo = "docker://" + server.host() + "/ai/paddle";
  std::string k = (d.path / "release").string(), other = (d.path / "other").string();

  REQUIRE(cli({"keygen", "--out", k}).ok());
  REQUIRE(cli({"keygen", "--out", other}).ok());

  build_image("imgtool-test/honest:cpu", cpu_labels("3.11"));
  build_image("imgtool-test/liar:py310", cpu_labels("3.10"));
  auto gpu = cpu_labels("3.11");
  gpu["io.imgtool.variant"] = "gpu";
  gpu["io.imgtool.cuda"] = "12.6";
  gpu["io.imgtool.cudnn"] = "9.5";
  gpu["io.imgtool.min-driver"] = "560.28.03";
  build_image("imgtool-test/liar:gpu", gpu, "ENV NVIDIA_REQUIRE_CUDA=\"cuda>=12.6\"\n");

  std::string honest = copy_to("imgtool-test/honest:cpu", repo + ":3.2.0");
  REQUIRE(cli({"sign", repo + ":3.2.0", "--key", k + ".key"}).ok());

  SUBCASE("a signed honest cpu image verifies; json and junit agree") {
    auto r = cli({"verify", repo + ":3.2.0", "--key", k + ".pub", "--no-smoke", "--json", "--junit",
                  (d.path / "out.xml").string()});
    CHECK(r.exit_code == 0);
    CHECK(json::parse(r.out)["ok"] == true);
    CHECK(read_file(d.path / "out.xml").find("failures=\"0\"") != std::string::npos);
    // An independent verifier: the openssl CLI checks the stored signature.
    auto sig = reg.get_manifest("ai/paddle", sign::signature_tag(honest));
    auto layer = sig.layers().at(0);
    write_file_atomic(d.path / "payload", reg.get_blob_bytes("ai/paddle", layer));
    write_file_atomic(d.path / "sig.der", *sign::base64_decode(layer.annotations.at(sign::kSignatureAnnotation)));
    auto o = run({"openssl", "dgst", "-sha256", "-verify", k + ".pub", "-signature", (d.path / "sig.der").string(),
                  (d.path / "payload").string()});
    CHECK(o.out.find("Verified OK") != std::string::npos);
    CHECK(read_file(d.path / "payload").find("\"docker-reference\":\"" + server.host() + "/ai/paddle:3.2.0\"") !=
          std::string::npos);
  }
  SUBCASE("one verify of a tag is one registry session: the registry sees one /v2/ probe") {
    // The image source, the signature repository, the SBOM and evidence rows all read through one
    // client (image::RegistrySession, handed down in TransportOptions): the server's own access log.
    int before = server.requests("GET /v2/ ");
    auto r = cli({"verify", repo + ":3.2.0", "--key", k + ".pub", "--no-smoke"});
    CHECK(r.exit_code == 0);
    CHECK(server.requests("GET /v2/ ") - before == 1);
    CHECK(server.requests("GET /v2/ai/paddle/") + server.requests("HEAD /v2/ai/paddle/") > 2);  // the log is read
  }
  SUBCASE("wrong key") {
    auto r = cli({"verify", repo + ":3.2.0", "--key", other + ".pub", "--no-smoke"});
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("does not verify with the given key") != std::string::npos);
  }
  SUBCASE("a tag whose digest is signed for another tag fails unless --any-tag-of-repository; by digest it holds") {
    auto m = reg.get_manifest("ai/paddle", honest);
    reg.put_manifest("ai/paddle", "candidate", m.raw, m.media_type);  // re-tagged: signed only as :3.2.0
    auto r = cli({"verify", repo + ":candidate", "--key", k + ".pub", "--no-smoke"});
    CHECK(r.exit_code == 1);  // before: the signature for :3.2.0 was accepted for :candidate
    CHECK(r.out.find("signed identity is " + server.host() + "/ai/paddle:3.2.0, expected " + server.host() +
                     "/ai/paddle:candidate") != std::string::npos);
    CHECK(
        cli({"verify", repo + ":candidate", "--key", k + ".pub", "--no-smoke", "--any-tag-of-repository"}).exit_code ==
        0);
    CHECK(cli({"verify", repo + "@" + honest, "--key", k + ".pub", "--no-smoke"}).exit_code == 0);
    CHECK(cli({"verify", repo + ":candidate", "--key", k + ".pub", "--no-smoke", "--any-tag-of-repository",
               "--identity", server.host() + "/ai/paddle"})
              .exit_code == 2);  // one rule or the other
  }
  SUBCASE("tampered manifest under the tag") {
    auto m = reg.get_manifest("ai/paddle", honest);
    json j = m.json();
    j["annotations"] = {{"tampered", "yes"}};
    reg.put_manifest("ai/paddle", "3.2.0", j.dump(), m.media_type);
    auto r = cli({"verify", repo + ":3.2.0", "--key", k + ".pub", "--no-smoke"});
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("FAIL signature") != std::string::npos);
    CHECK(r.out.find("no sha256-") != std::string::npos);
  }
  SUBCASE("a signature for another digest") {
    std::string liar = copy_to("imgtool-test/liar:py310", repo + ":liar");
    auto sig = reg.get_manifest("ai/paddle", sign::signature_tag(honest));
    reg.put_manifest("ai/paddle", sign::signature_tag(liar), sig.raw, sig.media_type);
    auto r = cli({"verify", repo + ":liar", "--key", k + ".pub", "--no-smoke"});
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("is for digest " + honest) != std::string::npos);
  }
  SUBCASE("a truncated signature") {
    auto sig = reg.get_manifest("ai/paddle", sign::signature_tag(honest));
    auto layers = sig.layers();
    std::string& s = layers[0].annotations[sign::kSignatureAnnotation];
    s = s.substr(0, s.size() / 2);
    auto sm = sign::build_signature_manifest(layers);
    reg.put_blob("ai/paddle", sm.config, sm.config_descriptor.media_type);
    reg.put_manifest("ai/paddle", sign::signature_tag(honest), sm.manifest.raw, sm.manifest.media_type);
    auto r = cli({"verify", repo + ":3.2.0", "--key", k + ".pub", "--no-smoke"});
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("truncated") != std::string::npos);
  }
  SUBCASE("lying labels: gpu without CUDA, python 3.10 in a 3.11 image") {
    copy_to("imgtool-test/liar:gpu", repo + ":3.2.0-gpu-cuda12.6-cudnn9.5");
    auto r = cli({"verify", repo + ":3.2.0-gpu-cuda12.6-cudnn9.5", "--no-signature", "--no-smoke", "--json"});
    CHECK(r.exit_code == 1);
    bool cudart = false;
    json report = json::parse(r.out);
    for (const auto& c : report["checks"])
      if (c["id"] == "contents.cudart" && c["status"] == "fail" && c["found"] == "no cudart library" && c["fix"] != "")
        cudart = true;
    CHECK(cudart);
    copy_to("imgtool-test/liar:py310", repo + ":py");
    auto p = cli({"verify", repo + ":py", "--no-signature", "--no-smoke"});
    CHECK(p.exit_code == 1);
    CHECK(p.out.find("expected: Python 3.10 installed") != std::string::npos);
  }
  SUBCASE("a multi-platform tag is narrowed to its linux/amd64 image, as promote does") {
    auto m = reg.get_manifest("ai/paddle", honest);
    json entry = {{"mediaType", m.media_type},
                  {"digest", honest},
                  {"size", m.raw.size()},
                  {"platform", {{"os", "linux"}, {"architecture", "amd64"}}}};
    json index = {{"schemaVersion", 2}, {"mediaType", image::media::kOciIndex}, {"manifests", json::array({entry})}};
    reg.put_manifest("ai/paddle", "multi", index.dump(), image::media::kOciIndex);
    auto r = cli({"verify", repo + ":multi", "--no-signature", "--no-smoke", "--json"});
    CHECK(r.exit_code == 0);  // before: the index itself was read as an image and failed
    CHECK(json::parse(r.out)["digest"] == honest);
  }
  SUBCASE("a multi-platform tag signed by `imgtool sign` (the index's digest, as cosign) verifies") {
    auto m = reg.get_manifest("ai/paddle", honest);
    json j = m.json();
    j["annotations"] = {{"org.opencontainers.image.ref.name", "multi"}};  // the same image under a digest not signed
    std::string image = sha256_digest(j.dump());
    reg.put_manifest("ai/paddle", image, j.dump(), m.media_type);
    json entry = {{"mediaType", m.media_type},
                  {"digest", image},
                  {"size", j.dump().size()},
                  {"platform", {{"os", "linux"}, {"architecture", "amd64"}}}};
    json index = {{"schemaVersion", 2}, {"mediaType", image::media::kOciIndex}, {"manifests", json::array({entry})}};
    reg.put_manifest("ai/paddle", "multi", index.dump(), image::media::kOciIndex);
    auto unsigned_index = cli({"verify", repo + ":multi", "--key", k + ".pub", "--no-smoke"});
    CHECK(unsigned_index.exit_code == 1);
    auto s = cli({"sign", repo + ":multi", "--key", k + ".key"});
    REQUIRE(s.ok());
    CHECK(s.out.find("signed " + server.host() + "/ai/paddle@" + sha256_digest(index.dump())) != std::string::npos);
    CHECK(s.out.find("SPDX SBOM of the linux/amd64 image " + image) != std::string::npos);
    auto r = cli({"verify", repo + ":multi", "--key", k + ".pub", "--no-smoke", "--json"});
    INFO(r.out);
    CHECK(r.exit_code == 0);  // before: the signature was looked for on the linux/amd64 image's digest only
    json report = json::parse(r.out);
    CHECK(report["digest"] == image);
    for (const auto& c : report["checks"])
      if (c["id"] == "signature") CHECK(c["found"].get<std::string>().find("on the index") != std::string::npos);
  }
  SUBCASE("promote: unsigned refused, signed-but-lying refused, signed honest moves the tag") {
    std::string liar = copy_to("imgtool-test/liar:py310", repo + ":staging-liar");
    auto r = cli({"promote", repo + "@" + liar, "--tag", "stable", "--key", k + ".pub"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("expected a valid signature") != std::string::npos);
    CHECK_FALSE(reg.head_manifest("ai/paddle", "stable").has_value());
    REQUIRE(cli({"sign", repo + "@" + liar, "--key", k + ".key"}).ok());
    r = cli({"promote", repo + "@" + liar, "--tag", "stable", "--key", k + ".pub"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("claims.python") != std::string::npos);
    CHECK_FALSE(reg.head_manifest("ai/paddle", "stable").has_value());
    // Signed as :3.2.0 only: under the one policy (exact identity) the moved tag would fail verify, so
    // promote refuses it and names both fixes; with --any-tag-of-repository it moves.
    r = cli({"promote", repo + "@" + honest, "--tag", "stable", "--key", k + ".pub"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("expected a signature by the given key for " + server.host() + "/ai/paddle:stable") !=
          std::string::npos);
    CHECK(r.err.find("--sign-key") != std::string::npos);
    CHECK(r.err.find("--any-tag-of-repository") != std::string::npos);
    CHECK_FALSE(reg.head_manifest("ai/paddle", "stable").has_value());
    r = cli({"promote", repo + "@" + honest, "--tag", "stable", "--key", k + ".pub", "--any-tag-of-repository"});
    CHECK(r.exit_code == 0);
    CHECK(reg.resolve("ai/paddle", "stable") == honest);
    CHECK(cli({"verify", repo + ":stable", "--key", k + ".pub", "--no-smoke"}).exit_code == 1);
    r = cli({"promote", repo + "@" + honest, "--tag", "stable", "--key", k + ".pub", "--sign-key", k + ".key"});
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("note:") == std::string::npos);
    CHECK(cli({"verify", repo + ":stable", "--key", k + ".pub", "--no-smoke"}).exit_code == 0);  // exactly REPO:stable
  }
}

namespace {

bool no_raw_controls(const std::string& text) {
  return std::none_of(text.begin(), text.end(), [](char ch) {
    auto c = static_cast<unsigned char>(ch);
    return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
  });
}

}  // namespace

// A registry's error text is shown escaped (ESC[2J would clear the terminal; BEL and other C0 make
// junit.xml ill-formed), and a pre-signed redirect URL is shown without its query (its signature).
// hostile_registry.py: a real docker-registry sends neither.
TEST_CASE("verify: a registry's control characters and pre-signed query strings reach no terminal or report") {
  ScratchDir d("ctl-registry");
  image::testing::HostileRegistry h(d.path, "hostile");
  std::string config = "{}", cfg = sha256_digest(config), layer = "sha256:" + std::string(64, 'a');
  json manifest = {
      {"schemaVersion", 2},
      {"mediaType", image::media::kOciManifest},
      {"config", {{"mediaType", "application/vnd.oci.image.config.v1+json"}, {"digest", cfg}, {"size", 2}}},
      {"layers",
       json::array({{{"mediaType", "application/vnd.oci.image.layer.v1.tar+gzip"}, {"digest", layer}, {"size", 10}}})}};
  auto routes = [&](json blob_route) {
    return json{{"routes", json::array({{{"method", "GET"}, {"path", "^/v2/$"}, {"status", 200}, {"body", "{}"}},
                                        {{"method", "GET"},
                                         {"path", "^/v2/ai/x/manifests/"},
                                         {"status", 200},
                                         {"headers", {{"Content-Type", image::media::kOciManifest}}},
                                         {"body", manifest.dump()}},
                                        blob_route})}};
  };
  std::string ref = "docker://" + h.host() + "/ai/x:t";
  auto xml = d.path / "out.xml";
  auto verify = [&] {
    RunResult r = cli({"verify", ref, "--no-signature", "--no-smoke", "--junit", xml.string()});
    CHECK(r.exit_code == 1);
    CHECK(no_raw_controls(r.out + r.err));
    std::string junit = read_file(xml);
    CHECK(no_raw_controls(junit));
    auto parsed = run({"python3", "-c", "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])", xml.string()});
    CHECK_MESSAGE(parsed.exit_code == 0, parsed.err);  // well-formed XML
    return r.out + r.err + junit;
  };
  SUBCASE("an error body with ESC[2J and BEL") {
    h.script(routes({{"method", "GET"},
                     {"path", "^/v2/ai/x/blobs/" + cfg},
                     {"status", 403},
                     {"body", R"({"errors":[{"code":"DENIED","message":"\u001b[2J\u001b[31mdenied\u0007"}]})"}}));
    std::string shown = verify();  // before: the table and junit.xml carried ESC and BEL raw
    CHECK(shown.find("HTTP 403 DENIED: \\x1b[2J\\x1b[31mdenied\\x07") != std::string::npos);
  }
  SUBCASE("a blob redirected to a pre-signed URL that fails") {
    int closed;  // a port nothing listens on: the hop fails with the URL in the message
    {
      image::testing::HostileRegistry gone(d.path, "gone");
      closed = gone.port();
    }
    std::string presigned = "http://127.0.0.1:" + std::to_string(closed) +
                            "/bucket/blob?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                            "&X-Amz-Credential=AKIAEXAMPLE&X-Amz-Signature=0123456789abcdef";
    h.script(routes({{"method", "GET"},
                     {"path", "^/v2/ai/x/blobs/" + cfg},
                     {"status", 307},
                     {"headers", {{"Location", presigned}}}}));
    std::string shown = verify();
    CHECK(shown.find("/bucket/blob?…") != std::string::npos);   // the URL, named
    CHECK(shown.find("X-Amz-Signature") == std::string::npos);  // before: the whole query, signature included
    CHECK(shown.find("AKIAEXAMPLE") == std::string::npos);
  }
}
