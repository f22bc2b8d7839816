#include "sbom/spdx.h"

#include <map>
#include <set>

#include "image/http.h"

namespace imgtool::sbom {

using nlohmann::ordered_json;

namespace {

ordered_json package_json(const Package& p) {
  ordered_json j = {{"SPDXID", p.spdxid}, {"name", p.name}};
  if (!p.version.empty()) j["versionInfo"] = p.version;
  j["downloadLocation"] = "NOASSERTION";
  j["filesAnalyzed"] = false;
  if (!p.checksums.empty()) {
    j["checksums"] = ordered_json::array();
    for (const auto& c : p.checksums)
      j["checksums"].push_back({{"algorithm", c.algorithm}, {"checksumValue", c.value}});
  }
  if (!p.purl.empty())
    j["externalRefs"] = ordered_json::array(
        {{{"referenceCategory", "PACKAGE-MANAGER"}, {"referenceType", "purl"}, {"referenceLocator", p.purl}}});
  if (!p.purpose.empty()) j["primaryPackagePurpose"] = p.purpose;
  if (!p.comment.empty()) j["comment"] = p.comment;
  if (!p.annotations.empty()) {
    j["annotations"] = ordered_json::array();
    for (const auto& a : p.annotations)
      j["annotations"].push_back({{"annotationDate", a.date},
                                  {"annotationType", "OTHER"},
                                  {"annotator", a.annotator},
                                  {"comment", a.comment}});
  }
  return j;
}

bool id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

}  // namespace

ordered_json Document::to_json() const {
  ordered_json j = {{"spdxVersion", "SPDX-2.3"},
                    {"dataLicense", "CC0-1.0"},
                    {"SPDXID", kDocumentId},
                    {"name", name},
                    {"documentNamespace", namespace_uri},
                    {"creationInfo", {{"created", created}, {"creators", creators}}}};
  if (!comment.empty()) j["comment"] = comment;
  j["packages"] = ordered_json::array();
  for (const auto& p : packages) j["packages"].push_back(package_json(p));
  j["relationships"] = ordered_json::array();
  for (const auto& r : relationships)
    j["relationships"].push_back(
        {{"spdxElementId", r.element}, {"relationshipType", r.type}, {"relatedSpdxElement", r.related}});
  return j;
}

std::string spdx_id(const std::string& kind, const std::string& name, const std::string& version) {
  std::string s = "SPDXRef-" + kind + "-" + name + (version.empty() ? "" : "-" + version);
  for (size_t i = 8; i < s.size(); ++i)
    if (!id_char(s[i])) s[i] = '-';
  return s;
}

void make_ids_unique(std::vector<Package>& packages) {
  std::map<std::string, int> seen;
  for (auto& p : packages) {
    int n = ++seen[p.spdxid];
    if (n > 1) p.spdxid += "-" + std::to_string(n);
  }
}

std::string purl(const std::string& type, const std::string& ns, const std::string& name, const std::string& version,
                 const std::string& qualifiers) {
  std::string s = "pkg:" + type + "/" + (ns.empty() ? "" : image::url_escape(ns) + "/") + image::url_escape(name);
  if (!version.empty()) s += "@" + image::url_escape(version);
  if (!qualifiers.empty()) s += "?" + qualifiers;
  return s;
}

namespace {

void need_string(const nlohmann::json& j, const char* key, const std::string& where, std::vector<std::string>& out) {
  if (!j.contains(key) || !j[key].is_string() || j[key].get<std::string>().empty())
    out.push_back(where + ": expected a non-empty \"" + key + "\"");
}

void check_packages(const nlohmann::json& doc, std::set<std::string>& ids, std::vector<std::string>& out) {
  if (!doc.contains("packages") || !doc["packages"].is_array()) {
    out.push_back("document: expected a packages array");
    return;
  }
  for (const auto& p : doc["packages"]) {
    std::string id = p.value("SPDXID", "");
    std::string where = "package " + (id.empty() ? p.value("name", "?") : id);
    for (const char* k : {"SPDXID", "name", "downloadLocation"}) need_string(p, k, where, out);
    if (id.rfind("SPDXRef-", 0) != 0) out.push_back(where + ": expected an SPDXID starting SPDXRef-");
    if (!ids.insert(id).second) out.push_back(where + ": SPDXID used twice");
  }
}

}  // namespace

std::vector<std::string> check_required(const nlohmann::json& doc) {
  std::vector<std::string> out;
  if (doc.value("spdxVersion", "") != "SPDX-2.3") out.push_back("document: expected spdxVersion SPDX-2.3");
  if (doc.value("dataLicense", "") != "CC0-1.0") out.push_back("document: expected dataLicense CC0-1.0");
  if (doc.value("SPDXID", "") != kDocumentId) out.push_back("document: expected SPDXID SPDXRef-DOCUMENT");
  for (const char* k : {"name", "documentNamespace"}) need_string(doc, k, "document", out);
  const auto ci = doc.value("creationInfo", nlohmann::json::object());
  need_string(ci, "created", "creationInfo", out);
  if (!ci.contains("creators") || !ci["creators"].is_array() || ci["creators"].empty())
    out.push_back("creationInfo: expected at least one creator");
  std::set<std::string> ids{kDocumentId};
  check_packages(doc, ids, out);
  bool describes = false;
  for (const auto& r : doc.value("relationships", nlohmann::json::array())) {
    std::string a = r.value("spdxElementId", ""), b = r.value("relatedSpdxElement", "");
    if (!ids.count(a) || !ids.count(b)) out.push_back("relationship " + a + " -> " + b + ": names an unknown element");
    describes |= a == kDocumentId && r.value("relationshipType", "") == "DESCRIBES";
  }
  if (!describes) out.push_back("relationships: expected SPDXRef-DOCUMENT DESCRIBES the image");
  return out;
}

}  // namespace imgtool::sbom
