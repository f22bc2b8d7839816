#include "host/registry_candidates.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "image/reference.h"
#include "sign/check_signature.h"
#include "image/registry_repository.h"

namespace imgtool::host {

matrix::Cell cell_from_labels(const std::string& tag, const std::map<std::string, std::string>& l, const matrix::KnowledgeBase& kb) {
  auto get = [&](const char* k) { auto it = l.find(std::string("io.imgtool.") + k); return it == l.end() ? std::string() : it->second; };
  matrix::Cell c;
  c.tag = tag;
  c.variant = get("variant");
  c.paddle = get("paddle");
  c.python = get("python");
  c.cuda = get("cuda");
  c.cudnn = get("cudnn");
  c.min_driver = get("min-driver");
  c.cuda_archs = get("cuda-archs");
  if (const matrix::CudaRelease* cr = c.cuda.empty() ? nullptr : kb.cuda(c.cuda)) {
    c.min_driver_full = cr->min_driver_full;
    if (c.min_driver.empty()) c.min_driver = cr->min_driver_compat;
  }
  if (c.min_driver_full.empty()) c.min_driver_full = c.min_driver;
  return c;
}

namespace {

std::map<std::string, std::string> labels_of(image::Registry& reg, const std::string& repo, const image::Manifest& m) {
  auto cfg = nlohmann::json::parse(reg.get_blob_bytes(repo, m.config()));
  std::map<std::string, std::string> out;
  if (cfg.contains("config") && cfg["config"].contains("Labels") && cfg["config"]["Labels"].is_object())
    for (auto& [k, v] : cfg["config"]["Labels"].items())
      if (v.is_string()) out[k] = v.get<std::string>();
  return out;
}

// Empty when the cell can be judged; else why not.
std::string unusable(const matrix::Cell& c) {
  if (c.variant != "gpu" && c.variant != "cpu") return "no io.imgtool.variant label (gpu|cpu): not an imgtool image";
  if (!Version::parse(c.paddle)) return "no valid io.imgtool.paddle label";
  if (c.variant == "gpu" && (!Version::parse(c.cuda) || !Version::parse(c.min_driver))) return "gpu image without valid io.imgtool.cuda/min-driver labels";
  return "";
}

}  // namespace

RegistryCandidates read_repository(const std::string& repository, EVP_PKEY& key, const matrix::KnowledgeBase& kb,
                                   const image::RegistryOptions& opt, bool any_tag_of_repository) {
  auto ref = image::parse_reference(repository);
  std::string last = repository.substr(repository.rfind('/') + 1);  // parse_reference defaults the tag to latest
  if (ref.transport != "docker" || last.find_first_of(":@") != std::string::npos)
    throw InputError("--repository: expected docker://HOST/REPO without a tag, found '" + repository + "'");
  image::Registry reg(ref.host, opt);
  image::RegistryRepository repo(reg, ref.name);
  RegistryCandidates out{.repository = repo.name()};
  for (const std::string& tag : reg.list_tags(ref.name)) {
    if (tag.rfind("sha256-", 0) == 0) continue;  // signatures, attestations
    image::Manifest m = reg.get_manifest(ref.name, tag);
    auto check = sign::check_signature(repo, m.digest(), key, sign::required_identity(repo.name(), tag, any_tag_of_repository));
    if (!check.ok) {
      out.refused.push_back({tag, "signature", "not selectable: " + check.summary()});
      continue;
    }
    matrix::Cell c = cell_from_labels(tag, labels_of(reg, ref.name, m), kb);
    if (auto why = unusable(c); !why.empty()) out.refused.push_back({tag, "labels", why});
    else {
      out.cells.push_back(c);
      out.digests[tag] = m.digest();
    }
  }
  return out;
}

}  // namespace imgtool::host
