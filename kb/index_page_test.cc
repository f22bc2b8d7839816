// The two page readers `kb check` trusts an index through (kb/index_page.h): PEP 440 versions, PyPI's
// JSON API (a recorded page, then odd and broken bodies) and PEP 503 pages (a constructed page, then
// odd and broken bodies). A broken page is one InputError line naming the URL.
#include "kb/index_page.h"

#include <doctest/doctest.h>

#include "core/error.h"
#include "core/fs.h"
#include "tests/test_dirs.h"

using namespace imgtool;
using namespace imgtool::kb;

namespace {

std::string testdata(const std::string& rel) { return read_file(testing::source_dir() + "/kb/testdata/index/" + rel); }

const IndexRelease* find(const std::vector<IndexRelease>& rs, const std::string& text) {
  for (auto& r : rs)
    if (r.version.text == text) return &r;
  return nullptr;
}

const std::string kUrl = "http://127.0.0.1:1/pypi/p/json";

// read_pypi_json's one-line message for `body`.
std::string pypi_error(const std::string& body, const std::string& project = "p") {
  try {
    read_pypi_json(body, kUrl, project);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string simple_error(const std::string& body) {
  try {
    read_simple_page(body, "http://127.0.0.1:1/cu126/paddlepaddle-gpu/", "paddlepaddle-gpu");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("PEP 440 versions: release numbers, final or not, odd spellings") {
  struct Row {
    const char* text;
    const char* release;  // "" = not a version
    bool final;
  };
  for (const Row& r : std::initializer_list<Row>{{"2.6.2", "2.6.2", true},
                                                 {"3.0.0rc1", "3.0.0", false},
                                                 {"3.0.0b2", "3.0.0", false},
                                                 {"2.6.2.post112", "2.6.2", true},
                                                 {"1.7.0.post97", "1.7.0", true},
                                                 {"13.4.46rc1", "13.4.46", false},
                                                 {"1.0.dev3", "1.0", false},
                                                 {"1.0a1.dev2", "1.0", false},
                                                 {"1.0-1", "1.0", true},
                                                 {"1.0.post", "1.0", true},
                                                 {"V1.2", "1.2", true},
                                                 {"0!1.2", "1.2", true},
                                                 {"1.2+cu118", "1.2", true},
                                                 {"1.0.0-beta.1", "1.0.0", false},
                                                 {"2.0.0a0", "2.0.0", false},
                                                 {"1.0_RC_2", "1.0", false},
                                                 {" 12.9.79 ", "12.9.79", true},
                                                 {"1!1.2", "", false},
                                                 {"abc", "", false},
                                                 {"1..2", "", false},
                                                 {"", "", false},
                                                 {"1.2.", "", false},
                                                 {"1.2+", "", false},
                                                 {"1.2 3", "", false},
                                                 {"1.2.x", "", false},
                                                 {"1.0.postfoo", "", false},
                                                 {"999999999999.1", "", false}}) {
    INFO(r.text);
    auto v = IndexVersion::parse(r.text);
    if (*r.release == 0) {
      CHECK_FALSE(v);
      continue;
    }
    REQUIRE(v);
    CHECK(v->release.text == r.release);
    CHECK(v->final == r.final);
    CHECK(v->text == r.text);
  }
  CHECK(IndexVersion::parse("2.6.2.post112")->release == *Version::parse("2.6.2"));
}

TEST_CASE("PyPI JSON: the recorded paddlepaddle page") {
  auto rs = read_pypi_json(testdata("pypi/paddlepaddle/json"), kUrl, "paddlepaddle");
  CHECK(rs.size() == 13);
  REQUIRE(find(rs, "3.3.1"));
  CHECK(find(rs, "3.3.1")->date == "2026-03-24");
  CHECK(find(rs, "3.3.1")->version.final);
  CHECK_FALSE(find(rs, "3.3.1")->yanked);
  CHECK_FALSE(find(rs, "3.0.0b2")->version.final);
  CHECK(rs.front().version.text == "1.8.5");  // sorted by version
  CHECK(rs.back().version.text == "3.3.1");
  // The name on the page is compared normalized: paddlepaddle_GPU is paddlepaddle-gpu.
  CHECK(read_pypi_json(testdata("pypi/paddlepaddle-gpu/json"), kUrl, "paddlepaddle_GPU").size() == 49);
}

TEST_CASE("PyPI JSON: dates, yanked releases, deleted releases, versions that are not PEP 440") {
  std::string page = R"({"info": {"name": "p", "version": "2.0"}, "releases": {
    "1.0": [{"upload_time_iso_8601": "2024-05-02T10:00:00Z", "yanked": false},
            {"upload_time_iso_8601": "2024-05-01T23:59:59.1Z", "yanked": true}],
    "1.1": [{"upload_time_iso_8601": "2024-06-01T00:00:00Z", "yanked": true},
            {"upload_time_iso_8601": "2024-06-02T00:00:00Z", "yanked": true}],
    "1.2": [{"upload_time_iso_8601": "2024-07-01T00:00:00Z"}],
    "0.9": [], "0.1-beta-legacy": [{"upload_time_iso_8601": "2010-01-01T00:00:00Z"}]}})";
  auto rs = read_pypi_json(page, kUrl, "p");
  REQUIRE(rs.size() == 3);                       // 0.9 has no file; 0.1-beta-legacy is no PEP 440 version
  CHECK(find(rs, "1.0")->date == "2024-05-01");  // the earliest file, yanked or not
  CHECK_FALSE(find(rs, "1.0")->yanked);          // one file left
  CHECK(find(rs, "1.1")->yanked);                // every file yanked
  CHECK_FALSE(find(rs, "1.2")->yanked);          // no 'yanked' field: not yanked
}

TEST_CASE("PyPI JSON: a broken page is one line naming the URL and what was expected") {
  std::string cut = pypi_error(testdata("malformed/pypi/paddlepaddle/json"), "paddlepaddle");
  CHECK(cut.find(kUrl +
                 ": expected PyPI's JSON API answer for paddlepaddle, found a body that is not JSON (2000 bytes;") ==
        0);
  CHECK(cut.find('\n') == std::string::npos);
  CHECK(pypi_error("<html>503 Service Unavailable</html>").find("not JSON") != std::string::npos);
  CHECK(pypi_error("").find("not JSON (0 bytes") != std::string::npos);
  // A number no double holds is nlohmann's out_of_range, not a parse_error: refused the same (fuzz_pypi's crash).
  CHECK(pypi_error("999E99999999").find("not JSON (12 bytes; number overflow parsing '999E99999999')") !=
        std::string::npos);
  CHECK(pypi_error("[1, 2]").find(
            "expected PyPI's JSON API answer (an object with 'info' and 'releases' objects), found a JSON array") !=
        std::string::npos);
  CHECK(pypi_error(R"({"message": "Not Found"})").find("found an object with keys 'message'") != std::string::npos);
  CHECK(pypi_error(R"({"info": {"name": "q"}, "releases": {}})")
            .find("expected the page of p (info.name), found the page of 'q'") != std::string::npos);
  CHECK(pypi_error(R"({"info": {}, "releases": {}})").find("found no name") != std::string::npos);
  CHECK(pypi_error(R"({"info": {"name": "p"}, "releases": {"1.0": {}}})")
            .find("expected releases['1.0'] to be a list of files") != std::string::npos);
  CHECK(
      pypi_error(R"({"info": {"name": "p"}, "releases": {"1.0": [{"filename": "p-1.0.whl"}]}})")
          .find(
              "expected every file of releases['1.0'] to carry upload_time_iso_8601 (an ISO 8601 time), found none") !=
      std::string::npos);
  CHECK(pypi_error(R"({"info": {"name": "p"}, "releases": {"1.0": [{"upload_time_iso_8601": "yesterday"}]}})")
            .find("found \"yesterday\"") != std::string::npos);
  CHECK(pypi_error(R"({"info": {"name": "p"}, "releases": {"1.0": ["p-1.0.whl"]}})").find("found a JSON string") !=
        std::string::npos);
  CHECK(
      pypi_error(
          R"({"info": {"name": "p"}, "releases": {"1.0": [{"upload_time_iso_8601": "2024-01-01T00:00:00Z", "yanked": "no"}]}})")
          .find("expected releases['1.0'] 'yanked' to be true or false, found \"no\"") != std::string::npos);
}

TEST_CASE("PyPI JSON: a page of 300 KB of nested brackets is one line, not a crash") {
  std::string deep =
      R"({"info": {"name": "p"}, "releases": {"1.0": )" + std::string(150000, '[') + std::string(150000, ']') + "}}";
  std::string m = pypi_error(deep);
  CHECK(m.find("found JSON nested deeper than 100 levels (at byte") != std::string::npos);
  CHECK(m.find('\n') == std::string::npos);
}

TEST_CASE("PEP 503: the constructed cu126 page, and odd but valid pages") {
  auto rs = read_simple_page(testdata("packages/stable/cu126/paddlepaddle-gpu/index.html"), "u", "paddlepaddle-gpu");
  std::vector<std::string> versions;
  for (auto& r : rs) versions.push_back(r.version.text);
  CHECK(versions == std::vector<std::string>{"3.0.0", "3.1.0", "3.1.1", "3.2.0", "3.2.1", "3.2.2", "3.3.0", "3.3.1"});
  CHECK(rs.front().date.empty());  // PEP 503 dates nothing

  // Upper-case tags, attributes, whitespace, a .postNNN wheel, an sdist, a duplicate, another project's
  // wheel (ignored, as pip does), a pre-release.
  std::string odd =
      "<!DOCTYPE html><HTML><body>\n"
      "<A HREF=\"x/paddlepaddle_gpu-2.6.2.post112-cp310-cp310-linux_x86_64.whl#sha256=00\" "
      "data-requires-python=\"&gt;=3.8\">\n"
      "  paddlepaddle_gpu-2.6.2.post112-cp310-cp310-linux_x86_64.whl </A><br/>\n"
      "<a href=\"y\">paddlepaddle_gpu-2.6.2.post112-cp311-cp311-linux_x86_64.whl</a>\n"
      "<a href=\"z\">paddlepaddle-gpu-2.6.1.tar.gz</a>\n"
      "<a href=\"w\">paddlepaddle-3.0.0-cp311-cp311-linux_x86_64.whl</a>\n"
      "<a href=\"v\">paddlepaddle_gpu-3.0.0rc1-1-cp311-cp311-linux_x86_64.whl</a>\n"
      "<abbr>not an anchor</abbr></body></HTML>";
  rs = read_simple_page(odd, "u", "paddlepaddle-gpu");
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].version.text == "2.6.1");
  CHECK(rs[1].version.text == "2.6.2.post112");
  CHECK(rs[1].version.release.text == "2.6.2");
  CHECK(rs[2].version.text == "3.0.0rc1");
  CHECK_FALSE(rs[2].version.final);
  // An HTML page without anchors: a project with no files.
  CHECK(read_simple_page("<html><body><h1>Links for paddlepaddle-gpu</h1></body></html>", "u", "paddlepaddle-gpu")
            .empty());
}

TEST_CASE("PEP 503: a broken page is one line naming the URL and what was expected") {
  const std::string url = "http://127.0.0.1:1/cu126/paddlepaddle-gpu/: ";
  CHECK(simple_error(R"({"releases": {}})") == url +
                                                   "expected a PEP 503 project page (HTML whose anchors name "
                                                   "paddlepaddle-gpu's files), found '{\"releases\": {}}'");
  CHECK(simple_error("").find("found ''") != std::string::npos);
  CHECK(simple_error("<html><a href=\"/\">Download</a></html>") ==
        url +
            "expected anchors whose text is a file name of paddlepaddle-gpu (….whl, ….tar.gz), found anchor text "
            "'Download'");
  CHECK(simple_error("<html><a href=\"/\">paddlepaddle_gpu-3.0.0-linux.whl</a></html>").find("found anchor text") !=
        std::string::npos);
  CHECK(simple_error("<html><a href=\"/\">paddlepaddle_gpu-latest-cp310-cp310-linux_x86_64.whl</a></html>") ==
        url +
            "expected a PEP 440 version in the file name 'paddlepaddle_gpu-latest-cp310-cp310-linux_x86_64.whl', found "
            "'latest'");
  CHECK(simple_error("<html><a href=\"/\">paddlepaddle_gpu-3.0.0-cp310-cp310-linux_x86_64.whl") ==
        url + "expected every <a> anchor closed by </a>, found one opened at byte 6 and never closed");
  std::string long_body(200000, 'x');
  CHECK(simple_error(long_body).find("(200000 bytes)") != std::string::npos);
  CHECK(simple_error(long_body).find('\n') == std::string::npos);
}
