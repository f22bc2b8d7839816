#include "dockerfiles/lint.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <random>
#include <regex>
#include <set>

#include "core/fs.h"
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
  CHECK(f[0].str() ==
        "dockerfiles/t.in:2: a download is piped into a shell unchecked; save it, verify with "
        "sha256sum -c, then run it [pipe-to-shell]");
}

TEST_CASE("lint accepts verified downloads, comments and look-alikes") {
  CHECK(found("RUN curl -fsSL -o /tmp/a.sh https://a/a.sh && \\\n"
              "    echo \"abc  /tmp/a.sh\" | sha256sum -c - && sh /tmp/a.sh\n")
            .empty());
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

// std::regex recursed once per character: a long line (a long matrix value rendered into a
// RUN line) crashed generate with SIGSEGV.
TEST_CASE("lint reads a 1 MB line, findings and all") {
  std::string value(1 << 20, 'a');
  CHECK(found("RUN curl -fsSL https://a/" + value + " -o b\n").empty());
  CHECK(found("RUN curl https://a/" + value + " -k -o b\n") == V{"1:curl-insecure"});
  CHECK(found("RUN wget -qO- https://a/" + value + " | bash\n") == V{"1:pipe-to-shell"});
  CHECK(found("ADD --chown=1 " + value + " /x\n").empty());
  std::string curls;
  for (int i = 0; i < 100000; ++i) curls += " curl x";
  CHECK(found("RUN echo" + curls + " | sh\n") == V{"1:pipe-to-shell"});
}

// The written-out rules answer what the regular expressions they replace answered.
TEST_CASE("lint rules: the same answers as the old regular expressions, on random lines") {
  const auto icase = std::regex::ECMAScript | std::regex::icase;
  const std::vector<std::pair<std::string, std::regex>> oracle = {
      {"wget-no-check-certificate", std::regex(R"(--no-check-certificate\b)")},
      {"apt-unauthenticated",
       std::regex(R"(--allow-unauthenticated\b|--allow-insecure-repositories\b|AllowUnauthenticated|--force-yes\b)")},
      {"curl-insecure", std::regex(R"(\bcurl\b[^|;&]*\s(--insecure\b|-[a-zA-Z]*k[a-zA-Z]*\b))")},
      {"pip-trusted-host", std::regex(R"(--trusted-host\b)")},
      {"add-remote-url", std::regex(R"(^\s*ADD\s+(--\S+\s+)*(https?|ftp)://)", icase)},
      {"pipe-to-shell", std::regex(R"(\b(curl|wget)\b[^|;&]*\|\s*(sudo\s+)?(-\S+\s+)*(ba|z|da|k)?sh\b)")},
  };
  const std::vector<std::string> parts{" ",
                                       "\t",
                                       "curl",
                                       "wget",
                                       "xcurl",
                                       "curl_",
                                       "-k",
                                       "-fsSLk",
                                       "-k1",
                                       "-kx_",
                                       "--insecure",
                                       "--insecurex",
                                       "--insecure-",
                                       "|",
                                       "||",
                                       ";",
                                       "&",
                                       "sh",
                                       "bash",
                                       "zsh",
                                       "dash",
                                       "ksh",
                                       "shx",
                                       "sh1",
                                       "csh",
                                       "sudo",
                                       "sudox",
                                       "-s",
                                       "--",
                                       "-",
                                       "ADD",
                                       "add",
                                       "Add",
                                       "--chown=1",
                                       "http://",
                                       "HTTPS://",
                                       "ftp://",
                                       "https:/",
                                       "x",
                                       "1",
                                       "_",
                                       ".",
                                       "--no-check-certificate",
                                       "--force-yes",
                                       "--force-yesno",
                                       "AllowUnauthenticated",
                                       "--allow-unauthenticated",
                                       "--allow-insecure-repositories_",
                                       "--trusted-host",
                                       "--trusted-hosts",
                                       "k"};
  const std::vector<std::string> seps{" ", " ", " ", " ", "", "", "\t", " | ", "|"};
  std::mt19937 rng(11);
  std::map<std::string, int> hits;
  for (int i = 0; i < 30000; ++i) {
    std::string line = rng() % 6 == 0 ? "ADD " : rng() % 2 ? "RUN curl " : "RUN wget ";
    for (size_t n = 1 + rng() % 8; n > 0; --n) {
      line += parts[rng() % parts.size()];
      line += seps[rng() % seps.size()];
    }
    std::set<std::string> expected, got;
    for (auto& [id, re] : oracle)
      if (std::regex_search(line, re)) expected.insert(id), ++hits[id];
    for (auto& f : lint_text(line, "t")) got.insert(f.rule);
    CHECK_MESSAGE(got == expected, "line: [" << line << "]");
  }
  for (auto& rule : oracle) CHECK_MESSAGE(hits[rule.first] > 20, rule.first);  // every rule was reached both ways
}
