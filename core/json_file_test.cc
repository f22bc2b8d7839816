// Untrusted JSON is refused at the parse when it nests too deep, before anything recursive
// (dump, copy, a walk) can overflow the stack on it.
#include "core/json_file.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <fstream>

#include "core/error.h"

using namespace imgtool;

namespace {
std::string nested(size_t n, char open = '[', char close = ']') { return std::string(n, open) + std::string(n, close); }
}  // namespace

TEST_CASE("json_too_deep_at: the bracket that opens one level too many; strings do not count") {
  CHECK_FALSE(json_too_deep_at(nested(100)));
  CHECK(json_too_deep_at(nested(101)) == std::optional<size_t>(100));
  CHECK_FALSE(json_too_deep_at("{\"a\": \"" + std::string(500, '[') + "\"}"));
  CHECK_FALSE(json_too_deep_at(R"(["\"[[[[", 1])", 3));
  CHECK(json_too_deep_at(R"({"a":{"b":[1]}})", 2) == std::optional<size_t>(10));
  CHECK_FALSE(json_too_deep_at("]]]]]][[", 2));  // stray closers never go below zero
}

TEST_CASE("parse_json_or_discarded: 300 KB of [[[[ is discarded like a syntax error, not a crash later") {
  std::string deep = nested(150000);
  auto j = parse_json_or_discarded(deep);
  CHECK(j.is_discarded());
  CHECK(parse_ordered_json_or_discarded(deep).is_discarded());
  CHECK(parse_json_or_discarded(nested(50)).dump().size() == 100);  // what imgtool reads stays readable
  CHECK(parse_json_or_discarded("{").is_discarded());
  CHECK(parse_json_or_discarded(R"({"tags":["a"]})")["tags"][0] == "a");
}

TEST_CASE("parse_json_text: too deep is one InputError line naming line:col of the bracket") {
  std::string doc = "{\n \"a\": " + nested(200000, '{', '}') + "}";
  try {
    parse_json_text(doc, "r.json", "a probe document");
    FAIL("no error");
  } catch (const InputError& e) {
    std::string m = e.what();
    CHECK(m.rfind("r.json:2:", 0) == 0);
    CHECK(m.find("nested at most 100 levels deep") != std::string::npos);
    CHECK(m.find('\n') == std::string::npos);
  }
}

TEST_CASE("read_json_file: a file above the size cap is refused before it is read") {
  auto dir = std::filesystem::temp_directory_path() / ("imgtool-json-file-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto p = dir / "big.json";
  { std::ofstream(p) << "[" << std::string(2000, ' ') << "]"; }
  CHECK_THROWS_WITH_AS(read_json_file(p, "a report", 1000), doctest::Contains("at most 1000 bytes, found 2002"),
                       InputError);
  CHECK(read_json_file(p, "a report", 4000).is_array());
  std::filesystem::remove_all(dir);
}
