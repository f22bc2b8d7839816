#include "sbom/build.h"

#include <algorithm>
#include <tuple>

#include "core/error.h"
#include "core/hash.h"
#include "matrix/labels.h"

namespace imgtool::sbom {

namespace {

constexpr const char* kTool = "Tool: imgtool";

std::string label(const ImageInfo& info, const std::string& key) {
  auto it = info.labels.find(key);
  return it == info.labels.end() ? "" : it->second;
}

bool digit_at(const std::string& s, std::initializer_list<size_t> at) {
  for (size_t i : at)
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
  return true;
}

std::string hex_of(const std::string& digest) { return is_sha256_digest(digest) ? digest.substr(7) : ""; }

std::vector<Checksum> sha256_of(const std::string& digest) {
  if (hex_of(digest).empty()) return {};
  return {{"SHA256", hex_of(digest)}};
}

Package image_package(const ImageInfo& info, const std::string& created) {
  Package p{kImageId, info.name, label(info, labels::kTag)};
  std::string last = info.name.substr(info.name.rfind('/') + 1);
  if (!hex_of(info.digest).empty()) p.purl = purl("oci", "", last, info.digest, "repository_url=" + info.name);
  p.purpose = "CONTAINER";
  p.checksums = sha256_of(info.digest);
  // The matrix cell and the build's inputs: every io.imgtool.* label, sorted by key.
  for (const auto& [k, v] : info.labels)
    if (k.rfind(labels::kPrefix, 0) == 0) p.annotations.push_back({created, kTool, k + "=" + v});
  return p;
}

std::vector<Package> base_package(const ImageInfo& info) {
  std::string name = label(info, "org.opencontainers.image.base.name");
  std::string digest = label(info, "org.opencontainers.image.base.digest");
  if (name.empty() && digest.empty()) return {};
  Package p{kBaseImageId, name.empty() ? "base image" : name, digest};
  p.purpose = "CONTAINER";
  p.checksums = sha256_of(digest);
  p.comment = "the base image (labels org.opencontainers.image.base.name/digest)";
  return {p};
}

void add_debs(const Inventory& inv, std::vector<Package>& out) {
  for (const auto& d : inv.debs) {
    Package p{spdx_id("deb", d.name, d.version), d.name, d.version};
    p.purl = purl("deb", "debian", d.name, d.version, d.arch.empty() ? "" : "arch=" + d.arch);
    p.purpose = "LIBRARY";
    out.push_back(p);
  }
}

void add_python(const Inventory& inv, std::vector<Package>& out) {
  for (const auto& d : inv.python) {
    Package p{spdx_id("pypi", canonical_python_name(d.name), d.version), d.name, d.version};
    p.purl = purl("pypi", "", canonical_python_name(d.name), d.version);
    p.purpose = "LIBRARY";
    p.comment = "site-packages: " + d.site;
    out.push_back(p);
  }
}

void add_nvidia(const Inventory& inv, std::vector<Package>& out) {
  for (const auto& l : inv.nvidia) {
    Package p{spdx_id("nvidia", l.name, l.version), "nvidia-" + l.name, l.version};
    p.purpose = "LIBRARY";
    std::vector<std::string> paths = l.paths;
    std::sort(paths.begin(), paths.end());
    for (const auto& path : paths) p.comment += (p.comment.empty() ? "found at: " : ", ") + path;
    out.push_back(p);
  }
}

std::string namespace_for(const ImageInfo& info) {
  std::string s = info.name + "@" + info.digest;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '/' && c != '-' && c != '@' && c != ':')
      c = '-';
  return "https://imgtool.invalid/spdx/" + s;
}

}  // namespace

ImageInfo image_info(const std::string& name, const std::string& digest, const image::ImageConfig& config) {
  return {name, digest, config.labels, config.created, config.architecture};
}

std::string spdx_time(const std::string& t, const std::string& what) {
  bool shape = t.size() >= 19 && digit_at(t, {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18}) && t[4] == '-' &&
               t[7] == '-' && (t[10] == 'T' || t[10] == 't') && t[13] == ':' && t[16] == ':';
  size_t end = 19;
  if (shape && end < t.size() && t[end] == '.')
    for (++end; end < t.size() && t[end] >= '0' && t[end] <= '9';) ++end;
  std::string zone = shape ? t.substr(end) : "";
  if (!shape || (zone != "Z" && zone != "z" && zone != "+00:00"))
    throw InputError(what + ": expected a UTC time like 2026-11-23T20:00:00Z, found '" + t + "'");
  return t.substr(0, 10) + "T" + t.substr(11, 8) + "Z";
}

Document build_sbom(const Inventory& inv, const ImageInfo& info, const SbomOptions& opt) {
  std::string created =
      !opt.created.empty() ? spdx_time(opt.created, "--created")
      : !label(info, "org.opencontainers.image.created").empty()
          ? spdx_time(label(info, "org.opencontainers.image.created"), "label org.opencontainers.image.created")
          : spdx_time(info.created.empty() ? "1970-01-01T00:00:00Z" : info.created, "config created");
  Document doc{info.name + "@" + info.digest, namespace_for(info), created, {kTool}};
  doc.comment = "SBOM of " + info.name + "@" + info.digest + (inv.os.empty() ? "" : " (" + inv.os + ")") +
                ", read from its layers by imgtool";
  doc.packages.push_back(image_package(info, created));
  for (auto& b : base_package(info)) doc.packages.push_back(b);
  std::vector<Package> contents;
  add_debs(inv, contents);
  add_python(inv, contents);
  add_nvidia(inv, contents);
  make_ids_unique(contents);
  doc.relationships.push_back({kDocumentId, "DESCRIBES", kImageId});
  if (doc.packages.size() > 1) doc.relationships.push_back({kImageId, "DESCENDANT_OF", kBaseImageId});
  for (auto& p : contents) {
    doc.relationships.push_back({kImageId, "CONTAINS", p.spdxid});
    doc.packages.push_back(std::move(p));
  }
  return doc;
}

}  // namespace imgtool::sbom
