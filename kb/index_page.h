// What a package index says about one project's releases, read from the two page shapes
// `imgtool kb check` (kb/check.h) compares the KB with:
//
//   PyPI's JSON API   GET {pypi}/pypi/NAME/json
//                     {"info": {"name": "paddlepaddle", "version": …, …},
//                      "releases": {"<version>": [{"filename", "upload_time_iso_8601", "yanked", …}, …], …}}
//                     A release's date is its earliest file's upload day; it is yanked when every file
//                     is; a release with no files (deleted) is left out.
//   PEP 503 page      GET {index}/NAME/   HTML whose anchors' text are the project's file names:
//                     wheels {name}-{version}(-{build})?-{python}-{abi}-{platform}.whl, sdists
//                     {name}-{version}.tar.gz|.zip; no dates. Anchors naming another project's files
//                     are ignored (as pip ignores them).
//
// Versions are PEP 440 (IndexVersion): the KB compares the release numbers; a pre-release or dev
// release is not final. Paddle's per-CUDA wheels are ".postNNN" versions (2.6.2.post112): post
// releases are final, their release numbers are the Paddle version.
//
// A body that is not the expected shape is the index's bad input: InputError, one line
// "URL: expected …, found …".
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/version.h"

namespace imgtool::kb {

struct IndexVersion {
  std::string text;    // as the index writes it: "2.6.2.post112", "3.0.0rc1", "13.4.46rc1"
  Version release;     // the release numbers: "2.6.2" (no pre, post, dev or local part)
  bool final = false;  // no pre-release and no dev part
  // nullopt when `text` is not a PEP 440 version (an epoch other than 0 counts as not one).
  static std::optional<IndexVersion> parse(std::string_view text);
};

struct IndexRelease {
  IndexVersion version;
  std::string date;     // YYYY-MM-DD of the earliest file's upload; "" = the page gives none (PEP 503)
  bool yanked = false;  // every file yanked (PyPI)
};

// Every release of `project` on a PyPI JSON page, in the page's order (versions that are not PEP 440
// are left out). InputError when the body is not that shape or is another project's page.
std::vector<IndexRelease> read_pypi_json(std::string_view body, const std::string& url, const std::string& project);

// The versions of `project`'s files on a PEP 503 page, each once, in page order. InputError when the
// body is no HTML page, or an anchor's text is no distribution file name or has no PEP 440 version.
std::vector<IndexRelease> read_simple_page(std::string_view body, const std::string& url, const std::string& project);

}  // namespace imgtool::kb
