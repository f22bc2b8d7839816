#include "verify/sbom_check.h"

#include "sbom/compare.h"
#include "sbom/publish.h"
#include "sign/attestation.h"

namespace imgtool::verify {

namespace {

CheckResult attestation_row(const sign::AttestationCheck& c, const std::string& digest, const std::string& key_name) {
  CheckResult r{"sbom.attestation",
                "SBOM attested for this digest, signed by the given key",
                c.ok ? Status::kPass : Status::kFail,
                "an SPDX attestation (" + c.attestation_tag + ") signed by " + key_name + " with subject " + digest,
                c.summary(),
                ""};
  if (!c.ok)
    r.fix = !c.found ? "publish through the pipeline (imgtool nightly), which attaches the SBOM before moving the tag"
                     : "re-publish the image: its attestation is for another image, by another key, or was altered";
  return r;
}

CheckResult document_row(const nlohmann::json& doc) {
  auto problems = sbom::check_required(doc);
  std::string found = problems.empty() ? "all required fields" : problems.front();
  if (problems.size() > 1) found += " (+" + std::to_string(problems.size() - 1) + " more)";
  return {"sbom.document",
          "SBOM is an SPDX 2.3 document",
          problems.empty() ? Status::kPass : Status::kFail,
          "SPDX-2.3 required fields and relationships",
          found,
          problems.empty() ? "" : "re-publish the image with this imgtool"};
}

CheckResult packages_row(image::Repository& repo, image::ImageSource& src, const image::Manifest& m,
                         const nlohmann::json& attested, const sbom::Inventory* inventory) {
  const nlohmann::json* info =
      attested.is_object() && attested.contains("creationInfo") ? &attested["creationInfo"] : nullptr;
  std::string created = info && info->is_object() && info->contains("created") && (*info)["created"].is_string()
                            ? (*info)["created"].get<std::string>()
                            : "";  // a field of another type: no date, never a type_error
  sbom::SbomOptions opt{.created = created};
  sbom::Document scanned = inventory ? sbom::sbom_of(*inventory, src, m, repo.name(), m.digest(), opt)
                                     : sbom::sbom_of(src, m, repo.name(), m.digest(), opt);
  sbom::PackageDiff d = sbom::compare_packages(attested, nlohmann::json(scanned.to_json()));
  size_t n = sbom::package_keys(attested).size();
  return {
      "sbom.packages",
      "SBOM packages match the image's layers",
      d.empty() ? Status::kPass : Status::kFail,
      "the packages a scan of the layers finds (dpkg, Python dist-infos, NVIDIA libraries, base image)",
      d.empty() ? std::to_string(n) + " packages, the same" : d.summary(),
      d.empty() ? "" : "the SBOM does not describe this image: re-publish it (imgtool nightly) to attest a fresh one"};
}

CheckResult skipped(const std::string& id, const std::string& why) {
  return {id, "SBOM packages match the image's layers", Status::kSkip, "a verified attestation", why, ""};
}

}  // namespace

std::vector<CheckResult> sbom_rows(image::Repository& repo, image::ImageSource& src, const image::Manifest& m,
                                   EVP_PKEY& key, const std::string& key_name, const sbom::Inventory* scanned) {
  auto c = sign::check_attestation(repo, m.digest(), key, sign::kSpdxPredicateType);
  std::vector<CheckResult> rows{attestation_row(c, m.digest(), key_name)};
  if (!c.ok) {
    rows.push_back(skipped("sbom.packages", "not compared: the attestation did not verify"));
    return rows;
  }
  nlohmann::json doc = c.statement.predicate;
  rows.push_back(document_row(doc));
  try {
    rows.push_back(packages_row(repo, src, m, doc, scanned));
  } catch (const std::exception& e) {
    rows.push_back({"sbom.packages", "SBOM packages match the image's layers", Status::kFail,
                    "the image's layers readable", e.what(), "check the registry and the image"});
  }
  return rows;
}

void add_sbom_rows(Report& report, image::Repository& repo, image::ImageSource& src, const image::Manifest& m,
                   EVP_PKEY& key, const std::string& key_name, const sbom::Inventory* scanned) {
  for (const auto& c : report.checks)
    if (c.id == "signature" && c.status != Status::kPass) {
      report.add(skipped("sbom", "not checked: the image signature failed"));
      return;
    }
  for (auto& r : sbom_rows(repo, src, m, key, key_name, scanned)) report.add(std::move(r));
}

}  // namespace imgtool::verify
