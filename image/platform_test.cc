// Platform selection from an index: the digest picked is what verify, promote, sign and sbom
// then fetch by, so it must be a digest. Before, any string the index held was returned (and a
// non-string digest or a non-object entry escaped as a JSON type_error, not an imgtool error).
#include "image/platform.h"

#include <doctest/doctest.h>

#include <vector>

#include "core/error.h"
#include "core/hash.h"

using namespace imgtool;
using namespace imgtool::image;
using nlohmann::json;

namespace {

// A vector, not a json: `{entry(x)}` into a json parameter is an array under gcc but a copy of the
// entry under clang (nlohmann's single-element brace initialisation), which the CI build uses.
Manifest index_of(const std::vector<json>& entries) {
  return Manifest{json{{"schemaVersion", 2}, {"mediaType", media::kOciIndex}, {"manifests", json(entries)}}.dump(),
                  media::kOciIndex};
}

json entry(json digest, const std::string& arch = "amd64") {
  return {{"mediaType", media::kOciManifest},
          {"digest", digest},
          {"size", 100},
          {"platform", {{"os", "linux"}, {"architecture", arch}}}};
}

}  // namespace

TEST_CASE("pick_platform: the linux/amd64 entry's digest") {
  std::string amd = sha256_digest("amd64"), arm = sha256_digest("arm64");
  CHECK(pick_platform(index_of({entry(arm, "arm64"), entry(amd)}), "r") == amd);
  CHECK(platform_digest(index_of({entry(amd)}), "r") == amd);
  CHECK_THROWS_WITH_AS(pick_platform(index_of({entry(arm, "arm64")}), "r"), doctest::Contains("expected a linux/amd64"),
                       Error);
}

TEST_CASE("pick_platform: a digest that is not sha256:<64 lowercase hex> is refused") {
  std::string hex = sha256_digest("x").substr(7);
  for (json bad :
       {json("../../other/manifests/latest"), json("sha256:" + hex + "/../x"), json("sha256:" + std::string(64, 'A')),
        json("sha512:" + hex + hex), json("latest"), json(""), json(42), json(nullptr)})
    CHECK_THROWS_WITH_AS_MESSAGE(pick_platform(index_of({entry(bad)}), "docker://r/x:1"),
                                 doctest::Contains("expected sha256:<64 lowercase hex>"), Error, bad.dump());
}

TEST_CASE("pick_platform: entries that are not objects are refusals, not JSON exceptions") {
  for (json bad : {json::array({1, "x"}), json::array({json::object({{"platform", "linux/amd64"}})}),
                   json::array({json::object({{"platform", {{"os", 1}, {"architecture", "amd64"}}}})}), json("nope")}) {
    Manifest m{json{{"schemaVersion", 2}, {"mediaType", media::kOciIndex}, {"manifests", bad}}.dump(),
               media::kOciIndex};
    CHECK_THROWS_AS_MESSAGE(pick_platform(m, "r"), Error, bad.dump());
  }
  CHECK_THROWS_AS(pick_platform(Manifest{"[1]", media::kOciIndex}, "r"), Error);
}
