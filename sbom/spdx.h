// The SPDX 2.3 document model (spdx.github.io/spdx-spec/v2.3), only what an
// image SBOM needs, with one JSON writer (the SPDX JSON serialisation that
// `pyspdxtools -i file.spdx.json` validates).
//
// Data model
//   Document      spdxVersion SPDX-2.3, dataLicense CC0-1.0, SPDXID
//                 SPDXRef-DOCUMENT, name, documentNamespace, creationInfo
//                 {created, creators}; packages; relationships.
//   Package       SPDXID, name, versionInfo, downloadLocation (NOASSERTION:
//                 an image does not say where a package was fetched from),
//                 filesAnalyzed false, optional checksums, purl externalRefs,
//                 primaryPackagePurpose, comment, annotations.
//   Relationship  DOCUMENT DESCRIBES image; image CONTAINS each package;
//                 image DESCENDANT_OF its base image.
//
// Determinism: to_json() writes keys in one fixed order; the caller sorts the
// packages (sbom/build.h); SPDXIDs are derived from kind, name and version
// (spdx_id), made unique in package order by a -2, -3… suffix.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace imgtool::sbom {

struct Checksum {
  std::string algorithm;  // "SHA256"
  std::string value;      // lower-case hex
};

struct Annotation {
  std::string date;       // YYYY-MM-DDThh:mm:ssZ
  std::string annotator;  // "Tool: imgtool"
  std::string comment;
};

struct Package {
  std::string spdxid;
  std::string name;
  std::string version;
  std::string purl;     // "" if none
  std::string purpose;  // primaryPackagePurpose: CONTAINER, LIBRARY, APPLICATION, OPERATING-SYSTEM; "" = none
  std::string comment;
  std::vector<Checksum> checksums;
  std::vector<Annotation> annotations;
};

struct Relationship {
  std::string element;
  std::string type;  // DESCRIBES, CONTAINS, DESCENDANT_OF
  std::string related;
};

struct Document {
  std::string name;
  std::string namespace_uri;
  std::string created;                // YYYY-MM-DDThh:mm:ssZ
  std::vector<std::string> creators;  // "Tool: imgtool-<version>"
  std::string comment;
  std::vector<Package> packages;
  std::vector<Relationship> relationships;

  nlohmann::ordered_json to_json() const;
};

inline constexpr const char* kDocumentId = "SPDXRef-DOCUMENT";

// "SPDXRef-<kind>-<name>-<version>", every character outside [A-Za-z0-9.-]
// replaced by '-' (SPDX idstring grammar).
std::string spdx_id(const std::string& kind, const std::string& name, const std::string& version);

// Appends -2, -3, … to repeated SPDXIDs, in package order.
void make_ids_unique(std::vector<Package>& packages);

// A package URL with each component percent-encoded as the purl spec says
// ("pkg:deb/debian/libc6@2.36-9%2Bdeb12u4?arch=amd64").
std::string purl(const std::string& type, const std::string& ns, const std::string& name, const std::string& version,
                 const std::string& qualifiers = "");

// Checks what SPDX 2.3 requires of a document this model wrote, as a list of
// problems ("" list = valid): document fields, every package's SPDXID/name/
// downloadLocation, unique SPDXIDs, relationships naming known elements, a
// DESCRIBES from the document. (The tests also run spdx-tools on the output.)
std::vector<std::string> check_required(const nlohmann::json& doc);

}  // namespace imgtool::sbom
