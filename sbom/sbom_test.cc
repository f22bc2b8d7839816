// The SBOM model and builder without a registry: SPDX 2.3 required fields,
// DESCRIBES/CONTAINS, SPDXIDs from names, determinism, the dpkg/dist-info
// inventory from real tar layers (whiteouts included), package comparison,
// and an attestation round trip in memory.
#include <doctest/doctest.h>

#include "core/error.h"
#include "sbom/build.h"
#include "sbom/compare.h"
#include "sbom/inventory.h"
#include "sbom/publish.h"
#include "sbom/spdx.h"
#include "sbom/testing/sample_image.h"
#include "sign/attestation.h"
#include "sign/keys.h"
#include "sign/sign_image.h"

using namespace imgtool;
using namespace imgtool::sbom;
using scan::testing::make_tar;
using scan::testing::MemorySource;
using namespace imgtool::sbom::testing;

namespace {

Document sample_doc(MemorySource& src) {
  return sbom_of(src, src.manifest(), "127.0.0.1:5000/ai/paddle", src.manifest().digest());
}

const nlohmann::json* find_package(const nlohmann::json& doc, const std::string& spdxid) {
  for (const auto& p : doc["packages"])
    if (p["SPDXID"] == spdxid) return &p;
  return nullptr;
}

}  // namespace

TEST_CASE("dpkg status: installed paragraphs only, continuation lines skipped") {
  auto debs = parse_dpkg_status(kStatus);
  REQUIRE(debs.size() == 2);
  CHECK(debs[0].name == "libc6");
  CHECK(debs[0].version == "2.36-9+deb12u4");
  CHECK(debs[0].arch == "amd64");
  CHECK(debs[1].name == "zlib1g");
  CHECK(debs[1].version == "1:1.2.13.dfsg-1");
  CHECK(parse_dpkg_status("Package: distroless\nVersion: 1\n").size() == 1);  // status.d: no Status field
}

TEST_CASE("SPDXIDs from names, purls percent-encoded, canonical Python names") {
  CHECK(spdx_id("deb", "libstdc++6", "12.2.0-14") == "SPDXRef-deb-libstdc--6-12.2.0-14");
  CHECK(spdx_id("pypi", "pyyaml", "6.0.2") == "SPDXRef-pypi-pyyaml-6.0.2");
  CHECK(purl("deb", "debian", "zlib1g", "1:1.2.13.dfsg-1", "arch=amd64") ==
        "pkg:deb/debian/zlib1g@1%3A1.2.13.dfsg-1?arch=amd64");
  CHECK(canonical_python_name("PyYAML") == "pyyaml");
  CHECK(canonical_python_name("Foo__Bar.baz") == "foo-bar-baz");
  std::vector<Package> ps{{"SPDXRef-pypi-pip-1"}, {"SPDXRef-pypi-pip-1"}, {"SPDXRef-x"}};
  make_ids_unique(ps);
  CHECK(ps[1].spdxid == "SPDXRef-pypi-pip-1-2");
  CHECK(spdx_time("2026-11-23T20:10:11.5Z", "t") == "2026-11-23T20:10:11Z");
  CHECK(spdx_time("2026-11-23T20:10:11+00:00", "t") == "2026-11-23T20:10:11Z");
  CHECK_THROWS_AS(spdx_time("yesterday", "--created"), InputError);
  CHECK_THROWS_AS(spdx_time("2026-11-23T20:10:11+02:00", "--created"), InputError);
}

TEST_CASE("inventory: one pass over the layers; whiteouts; every site-packages; NVIDIA sonames; os-release") {
  MemorySource src(config(), {lower_layer(), upper_layer()});
  Inventory inv = scan_image(src, src.manifest());
  REQUIRE(inv.debs.size() == 2);
  std::vector<std::string> py;
  for (const auto& d : inv.python) py.push_back(canonical_python_name(d.name) + "@" + d.version + " " + d.site);
  CHECK(py == std::vector<std::string>{
                  "pip@23.0.1 /usr/lib/python3/dist-packages", "pip@24.3.1 /opt/venv/lib/python3.11/site-packages",
                  "pyyaml@6.0.2 /opt/venv/lib/python3.11/site-packages", "six@1.16.0 /usr/lib/python3/dist-packages"});
  CHECK(inv.python[1].python == "3.11");
  REQUIRE(inv.nvidia.size() == 1);
  CHECK(inv.nvidia[0].name == "cudart");
  CHECK(inv.nvidia[0].version == "12.6.77");
  CHECK(inv.os == "Debian GNU/Linux 12 (bookworm)");
  CHECK(inv.facts.pythons == std::vector<std::string>{"3.11"});  // verify's facts from the same scan
}

TEST_CASE("SPDX 2.3 document: required fields, DESCRIBES/CONTAINS/DESCENDANT_OF, labels, deterministic") {
  MemorySource src(config(), {lower_layer(), upper_layer()});
  nlohmann::json doc = sample_doc(src).to_json();
  CHECK(check_required(doc).empty());
  CHECK(doc["spdxVersion"] == "SPDX-2.3");
  CHECK(doc["dataLicense"] == "CC0-1.0");
  CHECK(doc["SPDXID"] == "SPDXRef-DOCUMENT");
  CHECK(doc["creationInfo"]["created"] == "2026-11-23T20:10:11Z");  // the build's time, to the second
  CHECK(doc["documentNamespace"].get<std::string>().find(src.manifest().digest()) != std::string::npos);
  // 1 image + 1 base + 2 debs + 4 python + 1 nvidia
  CHECK(doc["packages"].size() == 9);
  const auto* image = find_package(doc, "SPDXRef-Image");
  REQUIRE(image);
  CHECK((*image)["versionInfo"] == "3.2.0-cpu-py311");
  CHECK((*image)["checksums"][0]["checksumValue"] == src.manifest().digest().substr(7));
  std::string notes = (*image)["annotations"].dump();
  CHECK(notes.find("io.imgtool.inputs-hash=sha256:aaaa") != std::string::npos);
  CHECK(notes.find("io.imgtool.kb-version=2026.11") != std::string::npos);
  const auto* base = find_package(doc, "SPDXRef-BaseImage");
  REQUIRE(base);
  CHECK((*base)["name"] == "debian:bookworm-slim");
  CHECK((*base)["versionInfo"] == "sha256:" + std::string(64, 'b'));
  const auto* zlib = find_package(doc, "SPDXRef-deb-zlib1g-1-1.2.13.dfsg-1");
  REQUIRE(zlib);
  CHECK((*zlib)["externalRefs"][0]["referenceLocator"] == "pkg:deb/debian/zlib1g@1%3A1.2.13.dfsg-1?arch=amd64");
  CHECK(find_package(doc, "SPDXRef-pypi-pip-23.0.1"));
  CHECK(find_package(doc, "SPDXRef-nvidia-cudart-12.6.77"));
  CHECK_FALSE(find_package(doc, "SPDXRef-pypi-old-1.0"));  // whited out

  size_t describes = 0, contains = 0, descendant = 0;
  for (const auto& r : doc["relationships"]) {
    describes += r["relationshipType"] == "DESCRIBES" && r["spdxElementId"] == "SPDXRef-DOCUMENT" &&
                 r["relatedSpdxElement"] == "SPDXRef-Image";
    contains += r["relationshipType"] == "CONTAINS" && r["spdxElementId"] == "SPDXRef-Image";
    descendant += r["relationshipType"] == "DESCENDANT_OF" && r["relatedSpdxElement"] == "SPDXRef-BaseImage";
  }
  CHECK(describes == 1);
  CHECK(contains == 7);
  CHECK(descendant == 1);

  // Identical inputs, identical bytes; a passed clock replaces the build time.
  MemorySource again(config(), {lower_layer(), upper_layer()});
  CHECK(sample_doc(again).to_json().dump() == sample_doc(src).to_json().dump());
  auto clocked = sbom_of(src, src.manifest(), "n", "d", {.created = "2027-01-01T00:00:00Z"}).to_json();
  CHECK(clocked["creationInfo"]["created"] == "2027-01-01T00:00:00Z");
}

TEST_CASE("check_required names what is missing") {
  nlohmann::json doc = {{"spdxVersion", "SPDX-2.2"}, {"packages", {{{"SPDXID", "x"}, {"name", "a"}}}}};
  auto problems = check_required(doc);
  std::string all;
  for (auto& p : problems) all += p + "\n";
  CHECK(all.find("SPDX-2.3") != std::string::npos);
  CHECK(all.find("documentNamespace") != std::string::npos);
  CHECK(all.find("downloadLocation") != std::string::npos);
  CHECK(all.find("DESCRIBES") != std::string::npos);
}

TEST_CASE("compare_packages names missing and extra packages") {
  MemorySource src(config(), {lower_layer(), upper_layer()});
  nlohmann::json doc = sample_doc(src).to_json();
  nlohmann::json tampered = doc;
  auto& ps = tampered["packages"];
  for (auto it = ps.begin(); it != ps.end(); ++it)
    if ((*it)["name"] == "zlib1g") {
      ps.erase(it);
      break;
    }
  ps.push_back({{"SPDXID", "SPDXRef-pypi-evil-1.0"},
                {"name", "evil"},
                {"versionInfo", "1.0"},
                {"downloadLocation", "NOASSERTION"}});
  CHECK(compare_packages(doc, doc).empty());
  PackageDiff d = compare_packages(tampered, doc);
  CHECK(d.missing == std::vector<std::string>{"pkg:deb/debian/zlib1g@1%3A1.2.13.dfsg-1?arch=amd64"});
  CHECK(d.extra == std::vector<std::string>{"evil@1.0"});
  CHECK(d.summary().find("missing from the SBOM: pkg:deb/debian/zlib1g") != std::string::npos);
}
