// `imgtool kb check` through the real binary against a loopback index (kb/testing/index_server.py, a
// real HTTP server) serving the recorded pages of kb/testdata/index/ (README.md there):
//   - the shipped KB: nothing stale, exit 0 (text and --json);
//   - a KB copy with Paddle 3.3.1 removed from paddle.yaml: exit 1 naming paddlepaddle 3.3.1 and its date;
//   - a KB copy with the newest NVIDIA pin lowered: exit 1 naming the package and the release;
//   - the malformed page (a mirror whose paddlepaddle page is cut short): exit 2, one line, nothing on stdout;
//   - an index that does not answer: exit 1, every page reported with "a retry may help";
//   - plain http to a host that is not loopback: exit 2, one line.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "core/strings.h"
#include "image/testing/python_server.h"
#include "tests/fixtures.h"
#include "tests/registry_fixture.h"

using namespace imgtool;
namespace fs = std::filesystem;
namespace fx = imgtool::testing;

namespace {

// The loopback index, serving kb/testdata/index/ for the whole binary.
struct Index {
  fx::ScratchDir dir{"kb-check"};
  image::testing::PythonServer server{(fs::path(fx::source_dir()) / "kb/testing/index_server.py").string(),
                                      dir.path,
                                      "index",
                                      {"--root", fx::source_dir() + "/kb/testdata/index"}};
  std::string url() const { return "http://" + server.host(); }
};

Index& index() {
  static Index i;
  return i;
}

// A copy of the shipped KB in a scratch folder, with `from` replaced by `to` once in `file`.
fs::path kb_copy(const fx::ScratchDir& scratch, const std::string& file, const std::string& from,
                 const std::string& to) {
  fs::path dir = scratch.path / "kb";
  fs::copy(fx::source_dir() + "/matrix/kb", dir);
  std::string text = read_file(dir / file);
  size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  write_file_atomic(dir / file, text.replace(at, from.size(), to));
  return dir;
}

}  // namespace

TEST_CASE("kb check: the shipped KB against the recorded index reports nothing stale") {
  auto r = fx::imgtool({"kb", "check", "--index", index().url()});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("pages: 49 of 49 read") != std::string::npos);
  CHECK(r.out.find("kb check: up to date") != std::string::npos);
  CHECK(r.out.find("released 2026-11-26") != std::string::npos);
  CHECK(r.out.find("stale:") == std::string::npos);

  auto j = fx::imgtool({"kb", "check", "--index", index().url(), "--json"});
  REQUIRE(j.exit_code == 0);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["ok"] == true);
  CHECK(doc["stale"].empty());
  CHECK(doc["sources"].size() == 49);
  CHECK(doc["kb"]["released"] == "2026-11-26");
  CHECK(doc["age_days"].is_number_integer());
}

TEST_CASE("kb check: a KB without Paddle 3.3.1 names paddlepaddle 3.3.1 and its date") {
  fx::ScratchDir scratch("kb-check-3.3.1");
  fs::path kb = kb_copy(scratch, "paddle.yaml", "versions: [\"3.3.0\", \"3.3.1\"]", "versions: [\"3.3.0\"]");
  auto r = fx::imgtool({"kb", "check", "--index", index().url(), "--kb", kb.string()});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  std::string file = (kb / "paddle.yaml").string();
  CHECK(r.out.find("  paddlepaddle 3.3.1 (2026-03-24): not in the 3.3 series' versions (3.3.0) — " + file + "\n") !=
        std::string::npos);
  // Paddle's cu118, cu126, cu129 and cu130 pages list 3.3.1 too, dated from PyPI.
  CHECK(r.out.find("  paddlepaddle-gpu 3.3.1 (2026-03-24): on Paddle's cu126 index; no release row lists 3.3.1 — " +
                   file) != std::string::npos);
  CHECK(r.out.find("stale: 5 release(s)") != std::string::npos);
  CHECK(r.out.find("kb check: STALE") != std::string::npos);

  auto j = fx::imgtool({"kb", "check", "--index", index().url(), "--kb", kb.string(), "--json"});
  CHECK(j.exit_code == 1);
  auto doc = nlohmann::json::parse(j.out);
  REQUIRE(doc["stale"].size() == 5);
  CHECK(doc["stale"][0]["package"] == "paddlepaddle");
  CHECK(doc["stale"][0]["version"] == "3.3.1");
  CHECK(doc["stale"][0]["date"] == "2026-03-24");
  CHECK(doc["stale"][0]["file"] == file);
  CHECK(doc["stale"][0]["url"] == index().url() + "/pypi/paddlepaddle/json");
}

TEST_CASE("kb check: a KB whose newest NVIDIA runtime pin is lowered names that package") {
  fx::ScratchDir scratch("kb-check-nvidia");
  fs::path kb = kb_copy(scratch, "cuda_wheels.yaml", "{package: nvidia-cuda-runtime, version: \"13.5.37\"",
                        "{package: nvidia-cuda-runtime, version: \"13.4.92\"");
  auto r = fx::imgtool({"kb", "check", "--index", index().url(), "--kb", kb.string()});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("  nvidia-cuda-runtime 13.5.37 (2026-11-04): newer than the KB's newest pin 13.4.92 — " +
                   (kb / "cuda_wheels.yaml").string() + "\n") != std::string::npos);
  CHECK(r.out.find("stale: 1 release(s)") != std::string::npos);
}

TEST_CASE("kb check: a malformed page is one line, exit 2, nothing on stdout") {
  auto r = fx::imgtool({"kb", "check", "--index", index().url() + "/malformed"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(strings::split_lines(r.err).size() == 1);
  CHECK(r.err.find("imgtool: " + index().url() +
                   "/malformed/pypi/paddlepaddle/json: expected PyPI's JSON API answer for "
                   "paddlepaddle, found a body that is not JSON (2000 bytes;") == 0);
}

TEST_CASE("kb check: an index that does not answer is reported per page, with whether a retry may help") {
  std::string url = "http://127.0.0.1:" + std::to_string(fx::free_port());
  auto r = fx::imgtool({"kb", "check", "--index", url, "--timeout", "10"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("pages: 0 of 49 read") != std::string::npos);
  CHECK(r.out.find("  paddlepaddle: GET " + url + "/pypi/paddlepaddle/json: ") != std::string::npos);
  CHECK(r.out.find("(a retry may help)") != std::string::npos);
  CHECK(r.out.find("kb check: INCOMPLETE") != std::string::npos);
}

TEST_CASE("kb check: bad input is one line, exit 2") {
  auto r = fx::imgtool({"kb", "check", "--index", "http://pypi.example"});
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "imgtool: --index: expected https (plain http only to a loopback mirror: 127.0.0.1, localhost, [::1]), found "
        "'http://pypi.example'\n");
  r = fx::imgtool({"kb", "check", "--kb", "/nonexistent-kb"});
  CHECK(r.exit_code == 2);
  CHECK(strings::split_lines(r.err).size() == 1);
}
