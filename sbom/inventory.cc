#include "sbom/inventory.h"

#include <algorithm>
#include <sstream>
#include <tuple>

#include "scan/name_match.h"

namespace imgtool::sbom {

namespace {

constexpr int64_t kMaxStatusBytes = 32ll << 20;  // a dpkg status file of thousands of packages
constexpr int64_t kMaxMetadataBytes = 1 << 20;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
std::string basename_of(const std::string& p) { return p.substr(p.rfind('/') + 1); }
std::string dirname_of(const std::string& p) { return p.substr(0, p.rfind('/')); }

bool is_site_dir(const std::string& dir) {
  std::string b = basename_of(dir);
  return b == "site-packages" || b == "dist-packages";
}

// The metadata file of a distribution ("" if `path` is none):
// <site>/X.dist-info/METADATA, <site>/X.egg-info/PKG-INFO, <site>/X.egg-info (file).
std::string dist_folder(const std::string& path, bool is_dir) {
  std::string base = basename_of(path), dir = dirname_of(path);
  if (base == "METADATA" && ends_with(dir, ".dist-info") && is_site_dir(dirname_of(dir))) return dir;
  if (base == "PKG-INFO" && ends_with(dir, ".egg-info") && is_site_dir(dirname_of(dir))) return dir;
  if (!is_dir && ends_with(base, ".egg-info") && is_site_dir(dir)) return path;
  return "";
}

// "Name: x" header of an email-style metadata text (headers end at the first blank line).
std::string header(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line) && !line.empty() && line != "\r") {
    if (line.size() > key.size() + 1 && line.compare(0, key.size(), key) == 0 && line[key.size()] == ':') {
      std::string v = line.substr(key.size() + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      while (!v.empty() && (v.back() == '\r' || v.back() == ' ')) v.pop_back();
      return v;
    }
  }
  return "";
}

PyDist read_dist(const std::string& folder, const scan::FsEntry& meta) {
  std::string stem = basename_of(folder);
  stem = stem.substr(0, stem.rfind('.'));  // drop .dist-info / .egg-info
  size_t dash = stem.find('-');
  PyDist d{stem.substr(0, dash), dash == std::string::npos ? "" : stem.substr(dash + 1), dirname_of(folder), ""};
  if (meta.content) {
    if (auto n = header(*meta.content, "Name"); !n.empty()) d.name = n;
    if (auto v = header(*meta.content, "Version"); !v.empty()) d.version = v;
  }
  if (auto sp = scan::names::site_packages(folder + "/x")) d.python = sp->python;
  return d;
}

std::string os_name(const scan::ContentsTree& t) {
  for (const char* p : {"/etc/os-release", "/usr/lib/os-release"}) {
    auto resolved = t.resolve(p);
    const scan::FsEntry* e = resolved ? t.find(*resolved) : nullptr;
    if (!e || !e->content) continue;
    std::istringstream in(*e->content);
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("PRETTY_NAME=", 0) == 0) {
        std::string v = line.substr(12);
        if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) v = v.substr(1, v.size() - 2);
        return v;
      }
  }
  return "";
}

void sort_all(Inventory& inv) {
  std::sort(inv.debs.begin(), inv.debs.end(), [](const auto& a, const auto& b) {
    return std::tie(a.name, a.arch, a.version) < std::tie(b.name, b.arch, b.version);
  });
  auto key = [](const PyDist& d) { return std::make_tuple(canonical_python_name(d.name), d.version, d.site); };
  std::sort(inv.python.begin(), inv.python.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
}

}  // namespace

std::string canonical_python_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool sep = c == '-' || c == '_' || c == '.';
    if (sep) {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

std::vector<DebPackage> parse_dpkg_status(const std::string& text) {
  std::vector<DebPackage> out;
  std::istringstream in(text + "\n\n");
  std::string line, status;
  DebPackage p;
  bool any = false;
  auto flush = [&] {
    bool installed = status.empty() || ends_with(status, " installed");
    if (any && !p.name.empty() && installed) out.push_back(p);
    p = {};
    status.clear();
    any = false;
  };
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      flush();
      continue;
    }
    if (line[0] == ' ' || line[0] == '\t') continue;  // continuation of a field
    any = true;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = line.substr(0, colon), v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    if (k == "Package")
      p.name = v;
    else if (k == "Version")
      p.version = v;
    else if (k == "Architecture")
      p.arch = v;
    else if (k == "Status")
      status = v;
  }
  return out;
}

bool keep_for_inventory(const std::string& path, int64_t size) {
  if (path == "/var/lib/dpkg/status") return size <= kMaxStatusBytes;
  if (path.rfind("/var/lib/dpkg/status.d/", 0) == 0) return size <= kMaxMetadataBytes;
  if (path == "/etc/os-release" || path == "/usr/lib/os-release") return size <= 64 * 1024;
  return size <= kMaxMetadataBytes && !dist_folder(path, false).empty();
}

Inventory gather_inventory(const scan::ContentsTree& tree) {
  Inventory inv;
  inv.facts = scan::gather_facts(tree);
  for (const auto& [path, e] : tree.entries()) {
    if (path == "/var/lib/dpkg/status" || path.rfind("/var/lib/dpkg/status.d/", 0) == 0) {
      if (e.content)
        for (auto& d : parse_dpkg_status(*e.content)) inv.debs.push_back(std::move(d));
      continue;
    }
    std::string folder = dist_folder(path, e.type == scan::FsEntry::Type::kDir);
    if (!folder.empty()) inv.python.push_back(read_dist(folder, e));
  }
  for (const auto& [name, lib] : inv.facts.libs)
    if (lib.present()) inv.nvidia.push_back({name, lib.version, lib.paths});
  inv.os = os_name(tree);
  sort_all(inv);
  return inv;
}

Inventory scan_image(image::ImageSource& src, const image::Manifest& m) {
  scan::ContentsTree tree(
      [](const std::string& p, int64_t n) { return scan::keep_for_facts(p, n) || keep_for_inventory(p, n); });
  // Layers read in parallel and merged in order, as verify's scan does (ContentsTree::add_layers).
  std::vector<scan::LayerInput> layers;
  for (const auto& l : m.layers())
    layers.push_back({src.describe() + " layer " + l.digest, [&src, l] { return src.open_blob(l); }, l.size});
  tree.add_layers(layers);
  return gather_inventory(tree);
}

}  // namespace imgtool::sbom
