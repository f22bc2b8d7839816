// RFC 8288 Link headers as registries (and hostile ones) send them. The old
// reader took the first <…> and looked for the literal rel="next" after it: it
// dropped an unquoted rel=next and followed rel="prev" when prev came first.
#include "image/link_header.h"

#include <doctest/doctest.h>

#include "core/error.h"

using namespace imgtool;
using namespace imgtool::image;

namespace {

std::optional<std::string> next_of(const std::string& header) { return find_link(parse_link_header(header), "next"); }

}  // namespace

TEST_CASE("Link: the next target, however rel is written") {
  CHECK(next_of(R"(</v2/r/tags/list?last=a&n=1000>; rel="next")") == "/v2/r/tags/list?last=a&n=1000");
  CHECK(next_of("</v2/r/tags/list?last=a>; rel=next") == "/v2/r/tags/list?last=a");  // token form
  CHECK(next_of("</n>;rel=next") == "/n");
  CHECK(next_of("</n> ; REL = \"NEXT\"") == "/n");                 // BWS, case-insensitive name and type
  CHECK(next_of(R"(</n>; rel="prev next")") == "/n");              // several relation types
  CHECK(next_of(R"(</n>; title="a, b; c"; rel="next")") == "/n");  // , and ; inside a quoted string
  CHECK(next_of(R"(</v2/r/tags/list?last=a,b;c>; rel="next")") == "/v2/r/tags/list?last=a,b;c");  // inside <…>
  CHECK(next_of(R"(</n>; rel="next"; rel="prev")") == "/n");  // only the first rel counts
  CHECK(next_of(R"(</p>; rel="prev"; rel="next")") == std::nullopt);
  CHECK(next_of(R"(</n>; title="say \"next\""; rel=next)") == "/n");
}

TEST_CASE("Link: several link-values; prev before next is not followed") {
  auto links = parse_link_header(R"(</prev>; rel="prev", </next>; rel="next", <https://x/doc>; rel=help; crossorigin)");
  REQUIRE(links.size() == 3);
  CHECK(links[0].rels == std::vector<std::string>{"prev"});
  CHECK(links[2].params.at("crossorigin").empty());
  CHECK(find_link(links, "next") == "/next");
  CHECK(find_link(links, "prev") == "/prev");
  CHECK(find_link(links, "last") == std::nullopt);
  CHECK(parse_link_header(" , ,</a>; rel=next ,, ").size() == 1);  // empty list elements
  CHECK(parse_link_header("").empty());
}

TEST_CASE("Link: two different next targets are refused; the same twice is one") {
  CHECK_THROWS_WITH_AS(next_of("</a>; rel=next, </b>; rel=next"), doctest::Contains("at most one rel=\"next\""), Error);
  CHECK(next_of("</a>; rel=next, </a>; rel=\"next\"") == "/a");
}

TEST_CASE("Link: text off the grammar is refused with its offset, never guessed at") {
  for (const char* bad : {"/v2/r/tags/list?last=a; rel=next",  // no <…>
                          "</n; rel=next",                     // no '>'
                          "</n>; rel=\"next",                  // unterminated quoted string
                          "</n> rel=next",                     // no ';' before the parameter
                          "</n>; =next",                       // no parameter name
                          "</n>; rel=",                        // no value after '='
                          "</n>; rel=\"ne\x01xt\"",            // control character
                          "</a>; rel=next </b>"})              // no ',' between links
    CHECK_THROWS_WITH_AS_MESSAGE(parse_link_header(bad), doctest::Contains("RFC 8288"), Error, bad);
  CHECK_THROWS_WITH_AS(parse_link_header("</n> rel=next"), doctest::Contains("offset 5"), Error);
}
