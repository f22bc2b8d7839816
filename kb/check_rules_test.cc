// check_kb's rules over the recorded pages (kb/testdata/index/), served by an injected fetch that
// maps each URL to its file: the shipped KB is up to date; releases added to a page (a new series,
// a point release, a new NVIDIA runtime, a cuDNN newer than the not_pinned row, a Paddle version
// on a cuXYZ page) are named with their date and file; pre-releases, yanked releases and versions
// older than the KB are not; a page not read is reported per source and the rest still checked.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "image/http.h"
#include "kb/check.h"
#include "tests/source_kb.h"
#include "tests/test_dirs.h"

using namespace imgtool;
using json = nlohmann::json;

namespace {

const std::string kMirror = "http://127.0.0.1:9";

std::string index_dir() { return testing::source_dir() + "/kb/testdata/index"; }

// A fetch serving the recorded index for kMirror's URLs, with `edit` applied to a page's body first.
kb::FetchPage recorded(std::function<void(const std::string& url, std::string& body)> edit = {}) {
  return [edit](const std::string& url) {
    std::string rel = url.substr(kMirror.size());
    std::string file = index_dir() + rel + (rel.ends_with("/") ? "index.html" : "");
    if (!std::filesystem::exists(file)) return kb::Page{404, "Not Found"};
    kb::Page p{200, read_file(file)};
    if (edit) edit(url, p.body);
    return p;
  };
}

kb::CheckOptions options(kb::FetchPage fetch) {
  kb::CheckOptions o = kb::mirror_options(kMirror);
  o.today = "2026-12-20";
  o.fetch = std::move(fetch);
  return o;
}

// `body` (a PyPI JSON page) with one more release of one file.
void add_release(std::string& body, const std::string& version, const std::string& time, bool yanked = false) {
  json j = json::parse(body);
  j["releases"][version] = json::array({{{"filename", "x-" + version + ".whl"},
                                         {"packagetype", "bdist_wheel"},
                                         {"upload_time_iso_8601", time},
                                         {"yanked", yanked}}});
  body = j.dump();
}

std::vector<std::string> lines(const kb::CheckReport& r) {
  std::vector<std::string> out;
  for (auto& s : r.stale) out.push_back(s.line());
  return out;
}

}  // namespace

TEST_CASE("kb check rules: the shipped KB against the recorded index is up to date") {
  kb::CheckReport r = kb::check_kb(testing::source_kb(), options(recorded()));
  CHECK(r.stale.empty());
  CHECK(r.complete());
  CHECK(r.exit_code() == 0);
  // paddlepaddle, paddlepaddle-gpu, 9 cuXYZ pages, 38 NVIDIA packages.
  CHECK(r.sources.size() == 49);
  for (auto& s : r.sources) {
    INFO(s.url);
    CHECK(s.releases > 0);
  }
  CHECK(r.sources[2].url == kMirror + "/packages/stable/cu102/paddlepaddle-gpu/");  // cu102 … cu130
  CHECK(r.sources[2].package == "paddlepaddle-gpu (cu102)");
  CHECK(r.sources[10].package == "paddlepaddle-gpu (cu130)");
  CHECK(r.released == testing::source_kb().released());
  CHECK(r.age_days == kb::days_between(r.released, "2026-12-20", "t"));
  CHECK(kb::render_text(r).find("kb check: up to date") != std::string::npos);
  json j = kb::to_json(r);
  CHECK(j["ok"] == true);
  CHECK(j["stale"].empty());
  CHECK(j["sources"].size() == 49);
}

TEST_CASE("kb check rules: new releases on the pages are named with date and file; the rest is not") {
  auto edit = [](const std::string& url, std::string& body) {
    if (url.ends_with("/pypi/paddlepaddle/json")) {
      add_release(body, "3.4.0", "2026-12-01T08:00:00Z");        // a new series
      add_release(body, "3.3.2", "2026-12-02T08:00:00Z");        // a point release of a known series
      add_release(body, "3.5.0rc1", "2026-12-03T08:00:00Z");     // a pre-release: not counted
      add_release(body, "3.3.3", "2026-12-04T08:00:00Z", true);  // yanked: not counted
      add_release(body, "2.3.9", "2026-12-05T08:00:00Z");        // older than the KB's oldest Paddle: not looked at
    }
    if (url.ends_with("/pypi/nvidia-cuda-runtime/json")) add_release(body, "13.6.20", "2026-12-10T00:00:00Z");
    if (url.ends_with("/pypi/nvidia-cudnn-cu12/json")) {
      add_release(body, "9.28.0.50", "2026-12-11T00:00:00Z");  // newer than the pin and the not_pinned row
    }
    if (url.ends_with("/cu126/paddlepaddle-gpu/"))
      body.insert(body.find("</body>"),
                  "<a href=\"x\">paddlepaddle_gpu-3.3.2-cp311-cp311-linux_x86_64.whl</a>\n"
                  "<a href=\"x\">paddlepaddle_gpu-3.0.0-cp38-cp38-linux_x86_64.whl</a>\n");
    if (url.ends_with("/cu118/paddlepaddle-gpu/"))  // 2.6.2 exists for 11.8 (PyPI's plain wheel): known
      body.insert(body.find("</body>"),
                  "<a href=\"x\">paddlepaddle_gpu-2.6.2.post118-cp311-cp311-linux_x86_64.whl</a>\n");
  };
  kb::CheckReport r = kb::check_kb(testing::source_kb(), options(recorded(edit)));
  std::string kbdir = testing::source_dir() + "/matrix/kb/";
  CHECK(lines(r) == std::vector<std::string>{
                        "paddlepaddle 3.3.2 (2026-12-02): not in the 3.3 series' versions (3.3.0, 3.3.1) — " + kbdir +
                            "paddle.yaml",
                        "paddlepaddle 3.4.0 (2026-12-01): a new series 3.4 (no release row) — " + kbdir + "paddle.yaml",
                        "paddlepaddle-gpu 3.3.2 (2026-12-02): on Paddle's cu126 index; no release row lists 3.3.2 — " +
                            kbdir + "paddle.yaml",
                        "nvidia-cudnn-cu12 9.28.0.50 (2026-12-11): newer than the KB's newest pin 9.10.2.21 and its "
                        "not_pinned 9.28.0.42 — " +
                            kbdir + "cuda_wheels.yaml",
                        "nvidia-cuda-runtime 13.6.20 (2026-12-10): newer than the KB's newest pin 13.5.37 — " + kbdir +
                            "cuda_wheels.yaml"});
  REQUIRE(r.stale.size() == 5);
  CHECK(r.stale[0].url == kMirror + "/pypi/paddlepaddle/json");
  CHECK(r.stale[0].file == kbdir + "paddle.yaml");
  CHECK(r.exit_code() == 1);
  CHECK(r.complete());
  CHECK(kb::render_text(r).find("stale: 5 release(s)") != std::string::npos);
  CHECK(kb::render_text(r).find("kb check: STALE") != std::string::npos);
  CHECK(kb::to_json(r)["stale"][1]["version"] == "3.4.0");
}

TEST_CASE("kb check rules: a page not read is reported on its source; the others are still checked") {
  auto fetch = [](const std::string& url) -> kb::Page {
    if (url.find("/packages/stable/") != std::string::npos)
      throw image::HttpTransportError("GET " + url + ": Could not resolve host: www.paddlepaddle.org.cn", true, 6);
    if (url.ends_with("/pypi/nvidia-npp/json")) return {503, "busy"};
    if (url.ends_with("/pypi/nvidia-nvjpeg/json")) return {404, "Not Found"};
    return recorded()(url);
  };
  kb::CheckReport r = kb::check_kb(testing::source_kb(), options(fetch));
  CHECK_FALSE(r.complete());
  CHECK(r.exit_code() == 1);
  CHECK(r.stale.empty());
  int failed = 0;
  for (auto& s : r.sources) failed += s.error.empty() ? 0 : 1;
  CHECK(failed == 11);
  CHECK(r.sources[2].error == "GET " + kMirror +
                                  "/packages/stable/cu102/paddlepaddle-gpu/: Could not resolve host: "
                                  "www.paddlepaddle.org.cn (a retry may help)");
  CHECK(r.sources[2].retryable);
  std::string text = kb::render_text(r);
  CHECK(text.find("pages: 38 of 49 read") != std::string::npos);
  CHECK(text.find("  nvidia-npp: GET " + kMirror + "/pypi/nvidia-npp/json: HTTP 503 (a retry may help)\n") !=
        std::string::npos);
  CHECK(text.find("  nvidia-nvjpeg: GET " + kMirror +
                  "/pypi/nvidia-nvjpeg/json: HTTP 404 (a retry will not help: is the URL right?)\n") !=
        std::string::npos);
  CHECK(text.find("  paddlepaddle-gpu (cu126): GET " + kMirror +
                  "/packages/stable/cu126/paddlepaddle-gpu/: Could not resolve") != std::string::npos);
  CHECK(text.find("kb check: INCOMPLETE") != std::string::npos);
  CHECK(kb::to_json(r)["complete"] == false);
}

TEST_CASE("kb check rules: a malformed page is bad input (InputError naming the URL)") {
  auto fetch = recorded([](const std::string& url, std::string& body) {
    if (url.ends_with("/pypi/nvidia-cublas/json")) body = body.substr(0, 100);
  });
  CHECK_THROWS_WITH_AS(
      kb::check_kb(testing::source_kb(), options(fetch)),
      doctest::Contains("127.0.0.1:9/pypi/nvidia-cublas/json: expected PyPI's JSON API answer for nvidia-cublas"),
      InputError);
}

TEST_CASE("kb check: index URLs, today, days") {
  CHECK(kb::mirror_options("http://127.0.0.1:8080/").pypi == "http://127.0.0.1:8080");
  CHECK(kb::mirror_options("http://[::1]:8080/m").paddle_index == "http://[::1]:8080/m/packages/stable");
  CHECK(kb::mirror_options("https://mirror.example/pypi-mirror").pypi == "https://mirror.example/pypi-mirror");
  CHECK_THROWS_WITH_AS(
      kb::mirror_options("http://mirror.example"),
      "--index: expected https (plain http only to a loopback mirror: 127.0.0.1, localhost, [::1]), found "
      "'http://mirror.example'",
      InputError);
  CHECK_THROWS_WITH_AS(kb::mirror_options("ftp://127.0.0.1"), doctest::Contains("--index: expected an http(s) URL"),
                       InputError);
  CHECK_THROWS_WITH_AS(kb::mirror_options("pypi.org"), doctest::Contains("found 'pypi.org'"), InputError);
  kb::CheckOptions o;
  o.pypi = "http://pypi.example";
  CHECK_THROWS_WITH_AS(kb::check_kb(testing::source_kb(), o), doctest::Contains("PyPI index URL: expected https"),
                       InputError);
  CHECK(kb::days_between("2026-11-26", "2026-12-20", "t") == 24);
  CHECK(kb::days_between("2026-12-31", "2027-01-01", "t") == 1);
  CHECK(kb::days_between("2026-03-01", "2026-02-28", "t") == -1);
  CHECK_THROWS_WITH_AS(kb::days_between("2026-02-30", "2026-03-01", "t"),
                       "t: expected real dates YYYY-MM-DD, found '2026-02-30'", InputError);
  CHECK(kb::utc_today().size() == 10);
}
