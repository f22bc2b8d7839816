#include <doctest/doctest.h>

#include <filesystem>

#include "core/fs.h"
#include "dockerfiles/lint.h"
#include "tests/fixtures.h"

using namespace imgtool;
using namespace imgtool::dockerfiles;

namespace {
// "line:rule" of each finding, for compact assertions.
std::vector<std::string> found(const std::string& text) {
  std::vector<std::string> out;
  for (auto& f : lint_text(text, "t")) out.push_back(std::to_string(f.line) + ":" + f.rule);
  return out;
}
using V = std::vector<std::string>;
}  // namespace

TEST_CASE("lint flags downloads without verification, one finding per line with file:line") {
  CHECK(found("FROM x\nRUN wget --no-check-certificate https://a/b\n") == V{"2:wget-no-check-certificate"});
  CHECK(found("RUN apt-get install -y --allow-unauthenticated foo\n") == V{"1:apt-unauthenticated"});
  CHECK(found("RUN curl -fsSLk https://a/b -o b\n") == V{"1:curl-insecure"});
  CHECK(found("RUN curl --insecure -o b https://a/b\n") == V{"1:curl-insecure"});
  CHECK(found("RUN curl -k https://a/b -o b\n") == V{"1:curl-insecure"});
  CHECK(found("RUN wget -qO- https://a/install.sh | sh\n") == V{"1:pipe-to-shell"});
  CHECK(found("RUN curl -fsSL https://a/install.sh | sudo bash -s --\n") == V{"1:pipe-to-shell"});
  CHECK(found("ADD https://a/b.tar.gz /tmp/\n") == V{"1:add-remote-url"});
  CHECK(found("RUN pip install --trusted-host a.org x==1\n") == V{"1:pip-trusted-host"});
  auto f = lint_text("FROM x\nRUN curl -fsSL \\\n      https://a/install.sh \\\n    | bash\n", "dockerfiles/t.in");
  REQUIRE(f.size() == 1);  // continuation lines are one instruction, reported where it starts
  CHECK(f[0].str() == "dockerfiles/t.in:2: a download is piped into a shell unchecked; save it, verify with "
                      "sha256sum -c, then run it [pipe-to-shell]");
}

TEST_CASE("lint accepts verified downloads, comments and look-alikes") {
  CHECK(found("RUN curl -fsSL -o /tmp/a.sh https://a/a.sh && \\\n"
              "    echo \"abc  /tmp/a.sh\" | sha256sum -c - && sh /tmp/a.sh\n").empty());
  CHECK(found("# never use curl -k or --no-check-certificate\n").empty());
  CHECK(found("RUN apt-get install -y --no-install-recommends curl ca-certificates\n").empty());
  CHECK(found("COPY wheels/ /tmp/wheels/\nRUN tar -xkf x.tar && cat x | shasum\n").empty());
}

TEST_CASE("the shipped templates are lint-clean") {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(imgtool::testing::source_dir()) / "dockerfiles";
  int files = 0;
  for (auto& e : fs::recursive_directory_iterator(dir)) {
    auto name = e.path().filename().string();
    if (!name.ends_with(".Dockerfile.in") && name != "labels.tsv") continue;
    ++files;
    CHECK_MESSAGE(lint_text(read_file(e.path()), name).empty(), format_findings(lint_text(read_file(e.path()), name)));
  }
  CHECK(files >= 3);
}
