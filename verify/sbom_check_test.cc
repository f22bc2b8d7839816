// verify's SBOM rows (sbom_check.h) over an in-memory repository, and the one-scan contract: the
// claims scan gathers the SBOM inventory, so verify reads the layers once.
#include "verify/sbom_check.h"

#include <doctest/doctest.h>

#include <optional>

#include "sbom/build.h"
#include "sbom/inventory.h"
#include "sbom/publish.h"
#include "sbom/testing/sample_image.h"
#include "sign/attestation.h"
#include "sign/keys.h"
#include "sign/sign_image.h"
#include "verify/static_checks.h"

using namespace imgtool;
using namespace imgtool::sbom;
using namespace imgtool::sbom::testing;
using scan::testing::CountingLayers;
using scan::testing::MemorySource;

namespace {
Document sample_doc(MemorySource& src) {
  return sbom_of(src, src.manifest(), "127.0.0.1:5000/ai/paddle", src.manifest().digest());
}
}  // namespace

TEST_CASE("verify's SBOM rows over an in-memory repository: pass, other image, altered packages, none") {
  image::MemoryRepository repo("127.0.0.1:5000/ai/paddle");
  sign::Pkey key = sign::generate_key();
  MemorySource src(config(), {lower_layer(), upper_layer()});
  image::Manifest m = src.manifest();
  auto rows = [&] { return verify::sbom_rows(repo, src, m, *key, "release.pub"); };
  auto status_of = [](const std::vector<verify::CheckResult>& rs, const std::string& id) {
    for (const auto& r : rs)
      if (r.id == id) return std::string(verify::status_name(r.status)) + ": " + r.found;
    return std::string("absent");
  };

  SUBCASE("none attached") { CHECK(status_of(rows(), "sbom.attestation").rfind("fail: no attestation", 0) == 0); }
  SUBCASE("attested: all pass") {
    attest_sbom(repo, src, m, *key);
    auto rs = rows();
    CHECK(status_of(rs, "sbom.attestation").rfind("pass", 0) == 0);
    CHECK(status_of(rs, "sbom.document").rfind("pass", 0) == 0);
    CHECK(status_of(rs, "sbom.packages") == "pass: 8 packages, the same");
  }
  SUBCASE("a signed SBOM whose packages differ from the layers fails naming the difference") {
    nlohmann::ordered_json doc = sample_doc(src).to_json();
    doc["packages"].erase(doc["packages"].begin() + 2);  // first deb: libc6
    sign::attach_attestation(repo, *key, {m.digest(), "", sign::kSpdxPredicateType, doc});
    std::string s = status_of(rows(), "sbom.packages");
    CHECK(s.rfind("fail", 0) == 0);
    CHECK(s.find("pkg:deb/debian/libc6@2.36-9%2Bdeb12u4?arch=amd64") != std::string::npos);
  }
}

TEST_CASE("verify: the claims scan gathers the SBOM's inventory, so the layers are read once") {
  image::MemoryRepository repo("127.0.0.1:5000/ai/paddle");
  sign::Pkey key = sign::generate_key();
  MemorySource mem(config(), {lower_layer(), upper_layer()});
  image::Manifest m = mem.manifest();
  attest_sbom(repo, mem, m, *key);
  sign::sign_digest(repo, *key, {m.digest(), repo.name() + ":t", {}});
  CountingLayers src(mem);
  verify::VerifyOptions opt{key.get(), "release.pub", true, {}, &scan::testing::test_kb()};
  verify::StaticInputs in{"docker://127.0.0.1:5000/ai/paddle:t", &src, &repo, "", "t"};
  std::optional<Inventory> inventory = verify::check_static(in, opt, true).inventory;
  REQUIRE(inventory);
  CHECK(src.layer_opens == 2);
  auto rows = verify::sbom_rows(repo, src, m, *key, "release.pub", &*inventory);
  bool packages_pass = false;
  for (const auto& r : rows)
    if (r.id == "sbom.packages") packages_pass = r.status == verify::Status::kPass && r.found == "8 packages, the same";
  CHECK(packages_pass);
  CHECK(src.layer_opens == 2);  // the SBOM rows read no layer again
  // The inventory of verify's scan is the SBOM scan's own.
  SbomOptions at{.created = "2026-11-24T00:00:00Z"};
  CHECK(sbom_of(*inventory, mem, m, repo.name(), m.digest(), at).to_json() ==
        sbom_of(mem, m, repo.name(), m.digest(), at).to_json());
}
