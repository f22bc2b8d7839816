// `imgtool kb check`: the knowledge base held against the package indexes that define it. Lists
// every release those indexes have that the KB lacks, with its date and the KB file to edit.
//
// Pages read (one GET each, several at once; kb/index_page.h reads them):
//   PyPI JSON     {pypi}/pypi/NAME/json for paddlepaddle, paddlepaddle-gpu and every package a
//                 base of cuda_wheels.yaml pins
//   Paddle index  {paddle_index}/cuXYZ/paddlepaddle-gpu/ (PEP 503) for every cuXYZ/ index under
//                 https://www.paddlepaddle.org.cn/packages/stable/ a GPU build of paddle.yaml names
// Rules: only final releases count (no pre-release, no dev release, not yanked); Paddle versions
// older than the KB's oldest are not looked at.
//   paddlepaddle, paddlepaddle-gpu  a version the release row of its series does not list, or of a
//                                   series with no row, is stale (paddle.yaml)
//   Paddle's cuXYZ page             a version (".postNNN" dropped) with no build for that CUDA in
//                                   paddle.yaml is stale; dated from PyPI when PyPI has it
//   NVIDIA packages                 a version newer than the package's newest pin and than its
//                                   not_pinned row is stale (cuda_wheels.yaml)
//
// Failures: a page that is not the expected shape is the index's bad input: check_kb throws
// InputError, one line naming the URL and what was expected (exit 2), and reports nothing. A page
// that could not be read (no answer, an HTTP error status) is recorded on its source, with whether
// a retry may help, and every other source is still checked (exit 1: the check is incomplete).
#pragma once
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "matrix/kb.h"

namespace imgtool::kb {

// One answer: the HTTP status and the body.
struct Page {
  long status = 0;
  std::string body;
};
// GET `url`. Throws imgtool::Error (with `retryable`) when no answer came.
using FetchPage = std::function<Page(const std::string& url)>;

struct CheckOptions {
  std::string pypi = "https://pypi.org";                                         // serves /pypi/NAME/json
  std::string paddle_index = "https://www.paddlepaddle.org.cn/packages/stable";  // serves /cuXYZ/paddlepaddle-gpu/
  std::chrono::seconds timeout{60};                                              // per page
  int parallel = 6;                                                              // pages read at once
  std::string today;  // YYYY-MM-DD the KB's age is counted to; "" = today, UTC
  // Empty: imgtool's HTTP client (image/http.h: TLS verified; plain http only to a loopback index,
  // and a loopback index's redirects are not followed). Tests may inject pages here.
  FetchPage fetch;
};

// `--index URL`: one mirror serving both, as URL/pypi/NAME/json and URL/packages/stable/cuXYZ/paddlepaddle-gpu/.
// InputError (one line, naming `flag`) for anything but an http(s) URL, or plain http to a host that is not loopback.
CheckOptions mirror_options(const std::string& url, const std::string& flag = "--index", CheckOptions base = {});

// A release an index has and the KB lacks.
struct StaleRelease {
  std::string package, version;  // as the index writes them: "paddlepaddle-gpu", "3.3.1"
  std::string date;              // YYYY-MM-DD; "" = no page dates it
  std::string reason;            // "not in the 3.3 series' versions (3.3.0)"
  std::string file;              // the KB file to edit
  std::string url;               // the page it was read from
  // "paddlepaddle 3.3.1 (2026-03-24): not in the 3.3 series' versions (3.3.0) — matrix/kb/paddle.yaml"
  std::string line() const;
};

// One page read (or not).
struct SourceResult {
  std::string package;  // "paddlepaddle", "nvidia-cublas-cu12"; Paddle's pages: "paddlepaddle-gpu (cu126)"
  std::string url;
  int releases = 0;   // releases read from the page
  std::string error;  // "" = read; else why not, ending with whether a retry may help
  bool retryable = false;
};

struct CheckReport {
  std::string kb_dir, kb_version, released, today;  // released: kb.yaml `released`
  long age_days = 0;                                // today - released
  std::vector<SourceResult> sources;
  std::vector<StaleRelease> stale;
  bool complete() const;  // every page was read
  int exit_code() const;  // 0: nothing stale and every page read; 1 otherwise
};

CheckReport check_kb(const matrix::KnowledgeBase& kb, const CheckOptions& o);

// Whole days from `from` to `to` (YYYY-MM-DD each); InputError naming `what` when one is not a real date.
long days_between(const std::string& from, const std::string& to, const std::string& what);
// Today, UTC, YYYY-MM-DD.
std::string utc_today();

// The report for a terminal: the KB's age, every stale release, every page not read, a verdict.
std::string render_text(const CheckReport& r);
nlohmann::json to_json(const CheckReport& r);

}  // namespace imgtool::kb
