#include "sbom/publish.h"

namespace imgtool::sbom {

Document sbom_of(image::ImageSource& src, const image::Manifest& m, const std::string& name, const std::string& digest,
                 const SbomOptions& opt) {
  return sbom_of(scan_image(src, m), src, m, name, digest, opt);
}

Document sbom_of(const Inventory& inv, image::ImageSource& src, const image::Manifest& m, const std::string& name,
                 const std::string& digest, const SbomOptions& opt) {
  return build_sbom(inv, image_info(name, digest, image::read_image_config(src, m)), opt);
}

sign::AttestResult attest_sbom(image::Repository& repo, image::ImageSource& src, const image::Manifest& m,
                               EVP_PKEY& key, const SbomOptions& opt) {
  Document doc = sbom_of(src, m, repo.name(), m.digest(), opt);
  return sign::attach_attestation(repo, key, {m.digest(), repo.name(), sign::kSpdxPredicateType, doc.to_json()});
}

std::map<std::string, std::string> package_versions(const Document& doc) {
  std::map<std::string, std::string> out;
  for (auto& p : doc.packages) {
    if (p.purl.empty() && p.name.rfind("nvidia-", 0) == 0) {  // NVIDIA libraries (add_nvidia): no purl type exists
      out["nvidia/" + p.name.substr(7)] = p.version;
    } else if (p.purl.rfind("pkg:", 0) == 0 && p.purl.rfind("pkg:oci/", 0) != 0) {
      out[p.purl.substr(4, p.purl.find('/', 4) - 4) + "/" + p.name] = p.version;
    }
  }
  return out;
}

}  // namespace imgtool::sbom
