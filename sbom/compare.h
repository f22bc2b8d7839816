// Does an attested SBOM describe these layers? Compares its packages with the
// SBOM built from a fresh scan (build.h), as multisets keyed by purl (or
// name@version where a package has no purl); the image package itself is left
// out (the attestation's subject names the image).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace imgtool::sbom {

struct PackageDiff {
  std::vector<std::string> missing;  // in the image, not in the SBOM
  std::vector<std::string> extra;    // in the SBOM, not in the image
  bool empty() const { return missing.empty() && extra.empty(); }
  // "2 package(s) in the image missing from the SBOM: pkg:deb/debian/curl@7.88…; 1 in the SBOM not in the image: …"
  std::string summary(size_t max_names = 5) const;
};

PackageDiff compare_packages(const nlohmann::json& attested, const nlohmann::json& expected);

// The package keys of a document (sorted), as compared above.
std::vector<std::string> package_keys(const nlohmann::json& doc);

}  // namespace imgtool::sbom
