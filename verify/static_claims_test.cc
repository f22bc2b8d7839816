// Claims from labels/tag/env against facts: lies are caught with expected/found/fix.
#include <doctest/doctest.h>

#include <random>
#include <regex>

#include "scan/contents_facts.h"
#include "scan/testing/fatbin_bytes.h"
#include "scan/testing/layers.h"
#include "verify/claims_check.h"
#include "verify/claims_model.h"

using namespace imgtool;
using namespace imgtool::verify;
using namespace imgtool::scan::testing;

namespace {

Claims claims_of(const nlohmann::json& config, const std::string& tag) {
  return read_claims(image::parse_image_config(config.dump(), "image config"), tag);
}

scan::ContentsFacts facts_of(const std::vector<TarItem>& items) {
  scan::ContentsTree t(scan::keep_for_facts);
  image::StringReader r(make_tar(items));
  t.add_layer(r, "t");
  return scan::gather_facts(t);
}

const CheckResult* row(const std::vector<CheckResult>& rows, const std::string& id) {
  for (const auto& r : rows)
    if (r.id == id) return &r;
  return nullptr;
}

bool all_pass(const std::vector<CheckResult>& rows) {
  for (const auto& r : rows)
    if (r.status == Status::kFail) return false;
  return true;
}

std::map<std::string, std::string> gpu_labels() {
  return {{"io.imgtool.paddle", "3.2.0"}, {"io.imgtool.python", "3.11"}, {"io.imgtool.variant", "gpu"},
          {"io.imgtool.cuda", "12.6"},    {"io.imgtool.cudnn", "9.5"},   {"io.imgtool.min-driver", "560.28.03"}};
}

std::vector<TarItem> honest_gpu_fs() {
  auto items = python_paddle_layer("3.11", "paddlepaddle_gpu", "3.2.0", "12.6", "9.5.1");
  items.insert(items.end(), {{"usr/local/cuda-12.6/lib64/libcudart.so.12.6.77", "x"},
                             {"usr/local/cuda-12.6/lib64/libcublas.so.12.6.4.1", "x"},
                             {"usr/lib/x86_64-linux-gnu/libcudnn.so.9.5.1", "x"},
                             {"usr/lib/x86_64-linux-gnu/libcudnn.so.9", "libcudnn.so.9.5.1", 'l'},
                             {"usr/lib/x86_64-linux-gnu/libcudnn.so", "libcudnn.so.9", 'l'}});
  return items;
}

}  // namespace

TEST_CASE("tag names encode claims") {
  auto t = parse_tag_claims("3.0.0-gpu-cuda12.6-cudnn9.5-trt10.5");
  CHECK(t["paddle"] == "3.0.0");
  CHECK(t["variant"] == "gpu");
  CHECK(t["cuda"] == "12.6");
  CHECK(t["cudnn"] == "9.5");
  CHECK(t["tensorrt"] == "10.5");
  CHECK(parse_tag_claims("3.1.0")["variant"] == "cpu");
  CHECK(parse_tag_claims("3.1.0-py311")["python"] == "3.11");
  CHECK(parse_tag_claims("latest").empty());
  CHECK(version_matches("12.6", "12.6.77"));
  CHECK_FALSE(version_matches("12.6", "12.60"));
  CHECK_FALSE(version_matches("3.2.0", "3.2.0rc1"));
}

TEST_CASE("an honest gpu image passes every claim") {
  Claims c = claims_of(config_with(gpu_labels(), {"NVIDIA_REQUIRE_CUDA=cuda>=12.6 brand=tesla,driver>=470"}),
                       "3.2.0-gpu-cuda12.6-cudnn9.5");
  auto rows = check_claims(c, facts_of(honest_gpu_fs()), test_kb());
  for (const auto& r : rows) CHECK_MESSAGE(r.status != Status::kFail, (r.id + ": " + r.found));
}

namespace {

// parse_tag_claims as it was, with std::regex: the oracle the written-out code must agree with.
std::map<std::string, std::string> regex_tag_claims(const std::string& tag) {
  static const std::vector<std::pair<std::regex, std::string>> tokens = {
      {std::regex(R"(^cudnn(\d+(?:\.\d+)*)$)"), "cudnn"},
      {std::regex(R"(^cuda(\d+(?:\.\d+)*)$)"), "cuda"},
      {std::regex(R"(^(?:trt|tensorrt)(\d+(?:\.\d+)*)$)"), "tensorrt"},
      {std::regex(R"(^py(?:thon)?(\d+\.\d+)$)"), "python"},
      {std::regex(R"(^(gpu|cpu)$)"), "variant"},
  };
  static const std::regex paddle(R"(^\d+\.\d+(?:\.\d+)*(?:(?:rc|b|a|\.post)\d+)?$)");
  static const std::regex py_compact(R"(^py(3)(\d{1,2})$)");
  std::map<std::string, std::string> out;
  size_t start = 0;
  for (int i = 0; start <= tag.size(); ++i) {
    size_t end = tag.find('-', start);
    std::string tok = tag.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? tag.size() + 1 : end + 1;
    std::smatch m;
    if (i == 0 && std::regex_match(tok, paddle)) out["paddle"] = tok;
    if (std::regex_match(tok, m, py_compact)) out["python"] = std::string(m[1]) + "." + std::string(m[2]);
    for (const auto& [re, field] : tokens)
      if (std::regex_match(tok, m, re)) {
        out[field] = m[1];
        break;
      }
  }
  if (!out.empty() && out.count("paddle") && !out.count("variant") && !out.count("cuda")) out["variant"] = "cpu";
  return out;
}

}  // namespace

// The written-out token rules answer what the regular expressions they replace answered.
TEST_CASE("parse_tag_claims: the same claims as the old regular expressions, on random tags") {
  const std::vector<std::string> parts{
      "",       "0",      "3",     "1",        "12",       "311",  "9",        "3.2.0",   "3.",     ".",
      "..",     "1.2",    "12.6",  ".6",       "rc",       "rc1",  "b",        "b2",      "a",      "a3",
      ".post",  ".post1", "post",  "py",       "py3",      "py31", "py311",    "py3111",  "python", "python3.11",
      "py3.11", "cuda",   "cudnn", "cuda12.6", "cudnn9.5", "trt",  "tensorrt", "trt10.5", "gpu",    "cpu",
      "gpux",   "cpu1",   "x",     "dev",      "_",        "é",    "\xff",     " "};
  const std::vector<std::string> seps{"-", "-", "-", "", "", ".", "--"};
  std::mt19937 rng(23);
  std::map<std::string, int> hits;
  for (int i = 0; i < 40000; ++i) {
    std::string tag;
    for (size_t n = 1 + rng() % 7; n > 0; --n) tag += parts[rng() % parts.size()] + seps[rng() % seps.size()];
    auto expected = regex_tag_claims(tag);
    for (auto& [field, v] : expected) ++hits[field];
    CHECK_MESSAGE(parse_tag_claims(tag) == expected, "tag: [" << tag << "]");
  }
  for (auto field : {"paddle", "python", "variant", "cuda", "cudnn", "tensorrt"})
    CHECK_MESSAGE(hits[field] > 100, field);  // every rule was reached
}

// libstdc++'s regex recursed once per character of a repeated group: a megabyte io.imgtool.tag
// label (read when an image is verified by digest) overflowed the stack and killed verify.
TEST_CASE("parse_tag_claims reads a megabyte io.imgtool.tag label") {
  std::string version = "12";
  while (version.size() < (1 << 20)) version += ".6";
  auto labels = gpu_labels();
  labels["io.imgtool.tag"] = "3.2.0-gpu-cuda" + version + "-cudnn9.5";
  Claims c = claims_of(config_with(labels, {}), "");
  CHECK(c.from_tag["cuda"] == version);
  CHECK(c.from_tag["paddle"] == "3.2.0");
  CHECK(parse_tag_claims(version + "-gpu")["paddle"] == version);
  CHECK(parse_tag_claims("py" + version).empty());
}

TEST_CASE("NVIDIA_REQUIRE_CUDA is read without std::regex: the version after cuda>=, and a hostile megabyte of it") {
  auto require_cuda = [](const std::string& env) {
    Claims c = claims_of(config_with(gpu_labels(), {"NVIDIA_REQUIRE_CUDA=" + env}), "");
    for (const auto& r : check_claims(c, facts_of(honest_gpu_fs()), test_kb()))
      if (r.id == "claims.require-cuda") return r.status;
    return Status::kFail;
  };
  CHECK(require_cuda("cuda>=12.6 brand=tesla,driver>=470") == Status::kPass);
  CHECK(require_cuda("brand=tesla cuda>=12.6.3.") == Status::kPass);
  CHECK(require_cuda("cuda>=12.8") == Status::kFail);
  CHECK(require_cuda("cuda>=") == Status::kFail);
  CHECK(require_cuda("driver>=470") == Status::kFail);
  // From the image's config: cuda>=(\d+(?:\.\d+)*) recursed once per character of this.
  std::string hostile = "cuda>=12";
  while (hostile.size() < (1 << 20)) hostile += ".6";
  CHECK(require_cuda(hostile) == Status::kPass);
}

TEST_CASE("min-driver below the knowledge base's floor for the CUDA major fails") {
  auto labels = gpu_labels();
  labels["io.imgtool.min-driver"] = "470.57.02";
  Claims c = claims_of(config_with(labels, {"NVIDIA_REQUIRE_CUDA=cuda>=12.6"}), "");
  auto rows = check_claims(c, facts_of(honest_gpu_fs()), test_kb());
  const CheckResult* d = row(rows, "claims.min-driver");
  REQUIRE(d);
  CHECK(d->status == Status::kFail);
  CHECK(d->expected == ">= 525.60.13 (CUDA 12.x floor)");
}

TEST_CASE("variant=gpu with no CUDA libraries and a CPU Paddle is reported with expected/found/fix") {
  Claims c = claims_of(config_with(gpu_labels(), {"NVIDIA_REQUIRE_CUDA=cuda>=12.6"}), "");
  auto rows = check_claims(c, facts_of(python_paddle_layer("3.11", "paddlepaddle", "3.2.0", "False")), test_kb());
  CHECK_FALSE(all_pass(rows));
  const CheckResult* cudart = row(rows, "contents.cudart");
  REQUIRE(cudart);
  CHECK(cudart->status == Status::kFail);
  CHECK(cudart->expected.find("12.6") != std::string::npos);
  CHECK(cudart->found.find("no cudart") != std::string::npos);
  CHECK_FALSE(cudart->fix.empty());
  CHECK(row(rows, "claims.build")->status == Status::kFail);
  CHECK(row(rows, "contents.cudnn-link")->status == Status::kFail);
}

TEST_CASE("python label 3.10 in a 3.11 image fails") {
  Claims c = claims_of(
      config_with({{"io.imgtool.paddle", "3.2.0"}, {"io.imgtool.python", "3.10"}, {"io.imgtool.variant", "cpu"}}),
      "3.2.0");
  auto rows = check_claims(c, facts_of(python_paddle_layer("3.11", "paddlepaddle", "3.2.0", "False")), test_kb());
  const CheckResult* py = row(rows, "claims.python");
  REQUIRE(py);
  CHECK(py->status == Status::kFail);
  CHECK(py->expected.find("3.10") != std::string::npos);
  CHECK(py->found.find("3.11") != std::string::npos);
}

TEST_CASE("an honest cpu image passes; a stale tag or wrong cuDNN fails") {
  Claims cpu = claims_of(
      config_with({{"io.imgtool.paddle", "3.2.0"}, {"io.imgtool.python", "3.11"}, {"io.imgtool.variant", "cpu"}}),
      "3.2.0");
  CHECK(
      all_pass(check_claims(cpu, facts_of(python_paddle_layer("3.11", "paddlepaddle", "3.2.0", "False")), test_kb())));

  Claims stale =
      claims_of(config_with(gpu_labels(), {"NVIDIA_REQUIRE_CUDA=cuda>=12.6"}), "3.2.0-gpu-cuda12.3-cudnn9.5");
  CHECK(row(check_claims(stale, facts_of(honest_gpu_fs()), test_kb()), "claims.tag")->status == Status::kFail);

  auto labels = gpu_labels();
  labels["io.imgtool.cudnn"] = "8.9";
  Claims cudnn = claims_of(config_with(labels, {"NVIDIA_REQUIRE_CUDA=cuda>=12.6"}), "");
  CHECK(row(check_claims(cudnn, facts_of(honest_gpu_fs()), test_kb()), "contents.cudnn")->status == Status::kFail);

  Claims env = claims_of(config_with(gpu_labels(), {}), "");
  CHECK(row(check_claims(env, facts_of(honest_gpu_fs()), test_kb()), "claims.require-cuda")->status == Status::kFail);
}

TEST_CASE("both CPU and GPU wheels installed is a failure") {
  auto items = python_paddle_layer("3.11", "paddlepaddle", "3.2.0", "False");
  items.push_back({"usr/local/lib/python3.11/dist-packages/paddlepaddle_gpu-3.2.0.dist-info/METADATA", "x"});
  Claims c = claims_of(
      config_with({{"io.imgtool.paddle", "3.2.0"}, {"io.imgtool.python", "3.11"}, {"io.imgtool.variant", "cpu"}}), "");
  auto rows = check_claims(c, facts_of(items), test_kb());  // kept alive: row() points into it
  const CheckResult* p = row(rows, "claims.paddle");
  REQUIRE(p);
  CHECK(p->status == Status::kFail);
  CHECK(p->fix.find("only one") != std::string::npos);
}

// Issue 24 section 2: the environment the NVIDIA runtime acts on.
TEST_CASE("NVIDIA_DRIVER_CAPABILITIES must give compute: without it --gpus mounts no libcuda") {
  auto facts = facts_of(honest_gpu_fs());
  auto status = [&](const std::vector<std::string>& env) {
    Claims c = claims_of(config_with(gpu_labels(), env), "");
    auto rows = check_claims(c, facts, test_kb());
    const CheckResult* r = row(rows, "env.driver-capabilities");
    REQUIRE(r);
    return std::make_pair(r->status, r->found + " | " + r->fix);
  };
  CHECK(status({"NVIDIA_DRIVER_CAPABILITIES=compute,utility"}).first == Status::kPass);
  CHECK(status({"NVIDIA_DRIVER_CAPABILITIES=all"}).first == Status::kPass);
  CHECK(status({}).first == Status::kPass);  // unset: the runtime's default utility,compute
  auto [st, text] = status({"NVIDIA_DRIVER_CAPABILITIES=utility,video"});
  CHECK(st == Status::kFail);
  CHECK(text.find("docker run --gpus mounts no libcuda.so") != std::string::npos);
  CHECK(text.find("set ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility") != std::string::npos);
}

TEST_CASE("no driver NVIDIA_REQUIRE_CUDA or min-driver admits may be below the CUDA runtime's own floor") {
  auto facts = facts_of(honest_gpu_fs());  // Paddle compiled for CUDA 12.6: the 12.x floor 525.60.13
  auto rows_for = [&](const std::string& require, const std::string& min_driver) {
    auto labels = gpu_labels();
    labels["io.imgtool.min-driver"] = min_driver;
    return check_claims(claims_of(config_with(labels, {"NVIDIA_REQUIRE_CUDA=" + require}), ""), facts, test_kb());
  };
  auto ok = rows_for("cuda>=12.6 driver>=550.54.14", "550.54.14");
  CHECK(row(ok, "env.runtime-floor")->status == Status::kPass);
  // cuda>=11.8 admits 520.61.05, which runs no CUDA 12 runtime.
  auto low = rows_for("cuda>=11.8", "550.54.14");
  const CheckResult* r = row(low, "env.runtime-floor");
  CHECK(r->status == Status::kFail);
  CHECK(r->found == "NVIDIA_REQUIRE_CUDA admits driver 520.61.05 (cuda>=11.8)");
  CHECK(r->fix.find("cuda>=12.6 driver>=525.60.13") != std::string::npos);
  auto drv = rows_for("cuda>=12.6 driver>=470", "470.57.02");
  CHECK(row(drv, "env.runtime-floor")->status == Status::kFail);
  CHECK(row(drv, "env.runtime-floor")->found ==
        "NVIDIA_REQUIRE_CUDA admits driver 470; io.imgtool.min-driver 470.57.02");
  // NVIDIA's forward-compatibility terms (brand=…,driver>=470) are served by cuda-compat, not a floor.
  CHECK(row(rows_for("cuda>=12.6 brand=tesla,driver>=470,driver<471", "525.60.13"), "env.runtime-floor")->status ==
        Status::kPass);
}

TEST_CASE("io.imgtool.cuda-archs is held against the fat binaries in Paddle's own libraries") {
  using namespace imgtool::scan::testing;
  auto items = honest_gpu_fs();
  std::string site = "usr/local/lib/python3.11/dist-packages/";
  items.push_back(
      {site + "paddle/libs/libphi.so", fat_library({{{2, 80, 40}, {2, 90, 40}}, {{2, 80, 8}, {2, 90, 8}}})});
  items.push_back(
      {site + "paddle/libs/libwarpctc.so", fat_library({{{2, 35, 8}}})});  // a bundled third party: not Paddle's
  scan::ContentsTree t([](const std::string& p, int64_t n) { return scan::keep_for_facts(p, n); });
  t.examine_code(scan::examine_for_facts);
  add(t, items);
  scan::ContentsFacts f = scan::gather_facts(t);
  REQUIRE(f.paddles.size() == 1);
  CHECK(f.paddles[0].gpu_code.text() == "sm_80,sm_90");
  auto labels = gpu_labels();
  labels["io.imgtool.cuda-archs"] = "sm_80,sm_90";
  auto ok = check_claims(claims_of(config_with(labels, {}), ""), f, test_kb());
  CHECK(row(ok, "contents.cuda-archs")->status == Status::kPass);
  labels["io.imgtool.cuda-archs"] = "sm_61,sm_70,sm_75,sm_80,sm_86";
  auto bad = check_claims(claims_of(config_with(labels, {}), ""), f, test_kb());
  CHECK(row(bad, "contents.cuda-archs")->status == Status::kFail);
  CHECK(row(bad, "contents.cuda-archs")
            ->found.rfind(
                "sm_80,sm_90 (2 fat binaries in /usr/local/lib/python3.11/dist-packages/paddle/libs/libphi.so)", 0) ==
        0);
  auto none = check_claims(claims_of(config_with(gpu_labels(), {}), ""), f, test_kb());
  CHECK(row(none, "contents.cuda-archs")->status == Status::kWarn);
}
