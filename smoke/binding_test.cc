// A probe document held against the image it is filed for (binding.h): each contradiction one line
// naming both values. Documents: the probe recorded on a real H100 HOST (CUDA 13.0, Python 3.12,
// no Paddle: ../shared/reference/hardware, copied to probe/testdata/h100-host-probe-skip-paddle.json)
// and a current probe's document of a CUDA 11.8 / Paddle 2.6.2 / Python 3.11 image.
#include "smoke/binding.h"

#include <doctest/doctest.h>

#include "core/fs.h"
#include "tests/test_dirs.h"

using namespace imgtool;
using namespace imgtool::smoke;
using nlohmann::json;

namespace {

const std::time_t kNow = parse_utc("2026-11-28T00:00:00Z");

matrix::LabelClaims cell_262() {
  matrix::LabelClaims c;
  c.tag = "2.6.2-gpu-cuda11.8-cudnn8.6-py3.11";
  c.paddle = "2.6.2", c.python = "3.11", c.variant = "gpu", c.cuda = "11.8", c.cudnn = "8.6";
  c.cuda_archs = "sm_61,sm_70,sm_75,sm_80,sm_86";
  return c;
}

BindingFacts facts(matrix::LabelClaims c = cell_262()) {
  return {.claims = c, .image_id = "sha256:" + std::string(64, 'c'), .created = parse_utc("2026-11-27T16:00:00Z")};
}

// What a current probe reports in that image on an A100 (sm_80, served by its archs).
json document_262() {
  json identity = {{"tag", cell_262().tag}, {"claims", cell_262().claims()}};
  return {{"probe", {{"started", "2026-11-27T17:00:00Z"}, {"nonce", "n-1"}}},
          {"identity", {{"path", "/etc/imgtool/identity.json"}, {"document", identity}}},
          {"driver", {{"devices", {{{"name", "NVIDIA A100-SXM4-80GB"}, {"cc", {8, 0}}}}}}},
          {"libraries", {{"cudart", {{"version", "11.8.89"}}}}},
          {"paddle",
           {{"version", "2.6.2"},
            {"compiled_with_cuda", true},
            {"cuda", "11.8"},
            {"cudnn", "8.6.0"},
            {"python", "3.11.9"}}}};
}

json host_document() {
  return json::parse(
      read_file(imgtool::testing::source_dir() + "/smoke/probe/testdata/h100-host-probe-skip-paddle.json"));
}

bool has(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("a document of the image it is filed for binds") {
  CHECK(binding_contradictions(document_262(), facts(), kNow).empty());
  BindingFacts with_nonce = facts();
  with_nonce.nonce = "n-1";
  CHECK(binding_contradictions(document_262(), with_nonce, kNow).empty());
}

TEST_CASE("a host-recorded H100 document (CUDA 13.0, Python 3.12, no Paddle) filed for a 2.6.2/11.8/3.11 cell") {
  json doc = host_document();
  doc["verdict"]["status"] = "pass";  // only its verdict edited
  auto lines = binding_contradictions(doc, facts(), kNow);
  CHECK(has(lines, "identity: the document carries no /etc/imgtool/identity.json"));
  CHECK(has(lines, "paddle: the document reports no Paddle (skipped), so it is about no image's Paddle"));
  CHECK(has(lines, "the loaded cudart: the document says '13.0"));
  CHECK(has(lines,
            "archs: device 'NVIDIA H100 80GB HBM3' (compute capability 9.0) is not served by the image's "
            "sm_61,sm_70,sm_75,sm_80,sm_86"));
  CHECK(has(lines, "time: the probe started at 2026-11-27T15:41:54Z, before the image"));  // an older run
}

TEST_CASE("each contradiction names both values") {
  auto one = [](auto edit, BindingFacts f = facts()) {
    json d = document_262();
    edit(d);
    return binding_contradictions(d, f, kNow);
  };
  CHECK(one([](json& d) { d["paddle"]["version"] = "3.2.0"; }) ==
        std::vector<std::string>{"paddle: the document says '3.2.0', the image claims '2.6.2'"});
  CHECK(one([](json& d) { d["paddle"]["python"] = "3.12.3"; }) ==
        std::vector<std::string>{"python: the document says '3.12.3', the image claims '3.11'"});
  CHECK(one([](json& d) { d["paddle"]["cuda"] = "12.6"; }) ==
        std::vector<std::string>{"paddle's CUDA build: the document says '12.6', the image claims '11.8'"});
  CHECK(one([](json& d) { d["paddle"]["cudnn"] = "9.5.1"; }) ==
        std::vector<std::string>{"paddle's cuDNN: the document says '9.5.1', the image claims '8.6'"});
  CHECK(one([](json& d) { d["identity"]["document"]["tag"] = "3.3.1-gpu-cuda13.0"; }) ==
        std::vector<std::string>{"identity tag: the document says '3.3.1-gpu-cuda13.0', the image claims '" +
                                 cell_262().tag + "'"});
  CHECK(one([](json& d) { d["probe"]["started"] = "2026-11-26T10:00:00Z"; })[0].find("before the image sha256:cccc") !=
        std::string::npos);
  CHECK(one([](json& d) { d["probe"]["started"] = "2026-11-28T10:00:00Z"; }) ==
        std::vector<std::string>{"time: the probe started at 2026-11-28T10:00:00Z, in the future"});
  BindingFacts nonce = facts();
  nonce.nonce = "tonight";
  CHECK(one([](json&) {}, nonce) ==
        std::vector<std::string>{"nonce: the document echoes 'n-1', the run was given 'tonight'"});
  BindingFacts no_id = facts();
  no_id.image_id.clear();
  CHECK(one([](json&) {}, no_id)[0].find("no image ID to bind the document to") != std::string::npos);
}

TEST_CASE("a GPU image's document filed under a CPU cell's tag, and a CPU document under a GPU cell") {
  matrix::LabelClaims cpu;
  cpu.tag = "3.3.1-cpu-py3.11", cpu.paddle = "2.6.2", cpu.python = "3.11", cpu.variant = "cpu";
  json d = document_262();
  d["identity"]["document"] = {{"tag", cpu.tag}, {"claims", cpu.claims()}};
  CHECK(
      binding_contradictions(d, facts(cpu), kNow) ==
      std::vector<std::string>{"variant: the document is of a GPU Paddle build (CUDA 11.8), the image is a cpu image"});
  d = document_262();
  d["paddle"]["compiled_with_cuda"] = false;
  CHECK(has(binding_contradictions(d, facts(), kNow), "variant: the document is of a CPU-only Paddle build"));
}

TEST_CASE("parse_utc") {
  CHECK(parse_utc("1970-01-01T00:01:00Z") == 60);
  CHECK(parse_utc("2026-11-27T10:00:00.123456Z") == parse_utc("2026-11-27T10:00:00Z"));
  CHECK(parse_utc("yesterday") == 0);
  CHECK(parse_utc("") == 0);
}
