#include "sbom/publish.h"

namespace imgtool::sbom {

Document sbom_of(image::ImageSource& src, const image::Manifest& m, const std::string& name, const std::string& digest,
                 const SbomOptions& opt) {
  auto config = nlohmann::json::parse(image::read_all(*src.open_blob(m.config())));
  Inventory inv = scan_image(src, m);
  return build_sbom(inv, image_info(name, digest, config), opt);
}

sign::AttestResult attest_sbom(sign::Repository& repo, image::ImageSource& src, const image::Manifest& m,
                               EVP_PKEY& key, const SbomOptions& opt) {
  Document doc = sbom_of(src, m, repo.name(), m.digest(), opt);
  return sign::attach_attestation(repo, key, {m.digest(), repo.name(), sign::kSpdxPredicateType, doc.to_json()});
}

std::function<void(const image::Manifest&)> attach_sbom_hook(
    sign::Repository& repo, std::function<std::unique_ptr<image::ImageSource>(const image::Manifest&)> open_source,
    EVP_PKEY& key) {
  return [&repo, open_source = std::move(open_source), &key](const image::Manifest& m) {
    auto src = open_source(m);
    attest_sbom(repo, *src, m, key);
  };
}

}  // namespace imgtool::sbom
