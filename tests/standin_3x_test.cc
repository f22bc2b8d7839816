// Issue 32 section 2: the Paddle 3.x GPU cells pass their own gate. Paddle's 3.x GPU wheels live on
// Paddle's own index, unreachable here, so each cell installs a STAND-IN paddlepaddle-gpu wheel
// (tests/standin/make-paddle-gpu-standin.py: the real wheel's METADATA requirements and version
// file, stub libphi.so/libpaddle.so with the real dynamic sections and dlopen strings) -- and,
// through the cell's own recipe (imgtool build: pip install from the wheelhouse), the REAL nvidia-*
// wheels from PyPI it requires. `imgtool verify docker-daemon:` then judges what the loader would
// load for every name Paddle dlopens. The stand-in is named in the image's repository and in
// the wheel (Summary, import banner); these images are removed at the end and never published.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "core/strings.h"
#include "matrix/kb.h"
#include "tests/gpu_images.h"

using namespace imgtool::testing;
using nlohmann::json;

namespace {

const std::string kStandin = source_dir() + "/tests/standin/make-paddle-gpu-standin.py";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string l = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (!l.empty()) out.push_back(l);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

// The wheelhouse of one stand-in cell: the real wheels it requires (scripts/wheelhouse.sh, cached by
// the requirement list) linked beside the stand-in wheel made for it.
fs::path wheelhouse_for(const std::string& cuda, const fs::path& dir) {
  auto reqs = imgtool::run({"python3", kStandin, "--cuda", cuda, "--print-requires"});
  REQUIRE_MESSAGE(reqs.ok(), reqs.err);
  std::vector<std::string> argv = {source_dir() + "/scripts/wheelhouse.sh", "3.11"};
  for (auto& r : lines_of(reqs.out)) argv.push_back(r);
  auto wh = imgtool::run(argv, {.timeout = std::chrono::seconds(2400)});
  REQUIRE_MESSAGE(wh.ok(), wh.err);
  fs::path out = dir / ("wheels-" + cuda);
  fs::create_directories(out);
  for (auto& e : fs::directory_iterator(last_line(wh.out))) {
    if (e.path().extension() != ".whl") continue;
    std::error_code ec;
    fs::create_hard_link(e.path(), out / e.path().filename(), ec);
    if (ec) fs::copy_file(e.path(), out / e.path().filename());
  }
  auto made = imgtool::run({"python3", kStandin, "--cuda", cuda, "--out", out.string()});
  REQUIRE_MESSAGE(made.ok(), made.err);
  return out;
}

}  // namespace

TEST_CASE("stand-in Paddle 3.3.1 cu126 and cu130 cells: built by their recipe on the real nvidia wheels, gate passes") {
  ScratchDir d("standin-3x");
  fs::path repo = d.path / "matrix";
  fs::create_directories(repo);
  imgtool::write_file_atomic(repo / "standin.yaml", R"(# STAND-IN Paddle 3.x GPU cells (tests/standin_3x_test.cc)
description: "STAND-IN Paddle 3.x GPU cells (imgtool test double wheel): the gate judges the real nvidia-* wheels"
repository: paddle-standin-test-double
include:
  - {variant: gpu, paddle: "3.3.1", cuda: "12.6", python: "3.11", os: debian12, flavor: runtime, python_from: base, base_image: "${IMGTOOL_TEST_BASE}", wheelhouse: "${STANDIN_WHEELS_126}"}
  - {variant: gpu, paddle: "3.3.1", cuda: "13.0", python: "3.11", os: debian12, flavor: runtime, python_from: base, base_image: "${IMGTOOL_TEST_BASE}", wheelhouse: "${STANDIN_WHEELS_130}"}
)");
  std::map<std::string, std::string> env = {{"IMGTOOL_TEST_BASE", base_image()},
                                            {"STANDIN_WHEELS_126", wheelhouse_for("12.6", d.path).string()},
                                            {"STANDIN_WHEELS_130", wheelhouse_for("13.0", d.path).string()}};
  auto kb = imgtool::matrix::KnowledgeBase::load_default();
  const auto* loads = kb.paddle_loads("3.3.1", true);
  REQUIRE(loads);
  // One cell at a time: built, judged, removed (two 3 GB images and a 5 GB stage never on disk at once).
  for (std::string cuda : {"12.6", "13.0"}) {
    std::string major = cuda.substr(0, cuda.find('.'));
    std::string tag = "3.3.1-gpu-cuda" + cuda + (cuda == "12.6" ? "-cudnn9.5" : "-cudnn9.13");
    std::string image = "paddle-standin-test-double:" + tag;
    CAPTURE(image);
    struct Removed {
      std::string image;
      ~Removed() { imgtool::run({"docker", "rmi", "-f", image}); }
    } removed{image};
    auto built = imgtool::testing::imgtool(
        {"build", (repo / "standin.yaml").string(), "--only", tag, "--state", (d.path / "state").string()},
        {.timeout = std::chrono::seconds(3000), .env = env});
    INFO(built.out << built.err);
    REQUIRE(built.ok());
    json v = verify_daemon(image);
    std::string all = v.dump(1);
    INFO(all);
    std::map<std::string, json> rows;
    for (const auto& c : v["checks"]) rows[c["id"].get<std::string>()] = c;
    // One loader row per library Paddle's 3.x load table names; every required one passes.
    for (const auto& l : loads->libs) {
      const auto* lib = kb.library(l.lib);
      std::string key = lib->keyed_by == "cudnn" ? "9" : major;
      if (lib->soname(key).empty()) continue;
      std::string id = "loader." + l.lib;
      REQUIRE_MESSAGE(rows.count(id), id);
      const json& r = rows["loader." + l.lib];
      if (l.need == "required")
        CHECK_MESSAGE(r["status"] == "pass", r.dump());
      else
        CHECK_MESSAGE(r["status"] != "fail", r.dump());  // a missing feature library is a warning
    }
    // NVRTC: asked for as libnvrtc.so, found through the link the recipe made to the wheel's library.
    CHECK(rows["loader.nvrtc"]["found"].get<std::string>().find("libnvrtc.so." + major) != std::string::npos);
    // What the libraries need in turn, searched as ld.so searches for them (their RUNPATH): cuSPARSE
    // needs nvJitLink; and libcuda.so is left to the host driver.
    CHECK_MESSAGE(rows["loader.cusparse"]["found"].get<std::string>().find("needs libnvJitLink.so." + major + " -> ") !=
                      std::string::npos,
                  rows["loader.cusparse"].dump());
    CHECK_MESSAGE(rows["loader.cuda"]["status"] == "pass", rows["loader.cuda"].dump());
    CHECK(v["exit_code"] == 0);
  }
}
