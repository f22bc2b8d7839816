#include "sbom/compare.h"

#include <algorithm>
#include <iterator>

#include "sbom/build.h"

namespace imgtool::sbom {

namespace {

std::string key_of(const nlohmann::json& p) {
  if (p.contains("externalRefs") && p["externalRefs"].is_array())
    for (const auto& r : p["externalRefs"])
      if (r.is_object() && r.value("referenceType", "") == "purl") return r.value("referenceLocator", "");
  return p.value("name", "?") + "@" + p.value("versionInfo", "");
}

std::string list(const std::vector<std::string>& v, size_t max) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > max) s += ", … (" + std::to_string(v.size() - max) + " more)";
  return s;
}

}  // namespace

std::vector<std::string> package_keys(const nlohmann::json& doc) {
  std::vector<std::string> keys;
  if (doc.contains("packages") && doc["packages"].is_array())
    for (const auto& p : doc["packages"])
      if (p.is_object() && p.value("SPDXID", "") != kImageId) keys.push_back(key_of(p));
  std::sort(keys.begin(), keys.end());
  return keys;
}

PackageDiff compare_packages(const nlohmann::json& attested, const nlohmann::json& expected) {
  auto have = package_keys(attested), want = package_keys(expected);
  PackageDiff d;
  std::set_difference(want.begin(), want.end(), have.begin(), have.end(), std::back_inserter(d.missing));
  std::set_difference(have.begin(), have.end(), want.begin(), want.end(), std::back_inserter(d.extra));
  return d;
}

std::string PackageDiff::summary(size_t max) const {
  std::string s;
  if (!missing.empty())
    s += std::to_string(missing.size()) + " package(s) in the image missing from the SBOM: " + list(missing, max);
  if (!extra.empty())
    s += (s.empty() ? "" : "; ") + std::to_string(extra.size()) +
         " package(s) in the SBOM not in the image: " + list(extra, max);
  return s.empty() ? "the same packages" : s;
}

}  // namespace imgtool::sbom
