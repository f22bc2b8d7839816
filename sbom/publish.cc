#include "sbom/publish.h"

namespace imgtool::sbom {

Document sbom_of(image::ImageSource& src, const image::Manifest& m, const std::string& name, const std::string& digest,
                 const SbomOptions& opt) {
  return sbom_of(scan_image(src, m), src, m, name, digest, opt);
}

Document sbom_of(const Inventory& inv, image::ImageSource& src, const image::Manifest& m, const std::string& name,
                 const std::string& digest, const SbomOptions& opt) {
  auto config = nlohmann::json::parse(image::read_all(*src.open_blob(m.config())));
  return build_sbom(inv, image_info(name, digest, config), opt);
}

sign::AttestResult attest_sbom(image::Repository& repo, image::ImageSource& src, const image::Manifest& m,
                               EVP_PKEY& key, const SbomOptions& opt) {
  Document doc = sbom_of(src, m, repo.name(), m.digest(), opt);
  return sign::attach_attestation(repo, key, {m.digest(), repo.name(), sign::kSpdxPredicateType, doc.to_json()});
}

std::function<void(const image::Manifest&)> attach_sbom_hook(
    image::Repository& repo, std::function<std::unique_ptr<image::ImageSource>(const image::Manifest&)> open_source,
    EVP_PKEY& key, std::function<void(const Document&)> on_document) {
  return [&repo, open_source = std::move(open_source), &key, on_document](const image::Manifest& m) {
    auto src = open_source(m);
    Document doc = sbom_of(*src, m, repo.name(), m.digest());
    sign::attach_attestation(repo, key, {m.digest(), repo.name(), sign::kSpdxPredicateType, doc.to_json()});
    if (on_document) on_document(doc);
  };
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
