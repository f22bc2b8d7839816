#include "image/image_diff.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>

#include "core/error.h"
#include "core/hash.h"
#include "image/config.h"
#include "image/tar_stream.h"

namespace imgtool::image {

namespace {

std::string clean(const char* p) {
  std::string s = p ? p : "";
  while (s.rfind("./", 0) == 0) s.erase(0, 2);
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// path -> facts, for every entry of one layer blob (any compression).
std::map<std::string, FileFacts> list_layer(ImageSource& src, const Descriptor& d) {
  auto blob = src.open_blob(d);
  TarStream tar(*blob, "diff: layer " + d.digest);
  std::map<std::string, FileFacts> out;
  char buf[65536];
  while (archive_entry* e = tar.next()) {
    FileFacts ff{archive_entry_size(e), unsigned(archive_entry_mode(e)), "", "", archive_entry_mtime(e)};
    if (const char* l = archive_entry_symlink(e)) ff.link = l;
    if (const char* l = archive_entry_hardlink(e)) ff.link = clean(l);
    Sha256 h;
    for (size_t n; (n = tar.read_data(buf, sizeof buf)) > 0;) h.update(std::string_view(buf, n));
    if (archive_entry_filetype(e) == AE_IFREG && ff.link.empty()) ff.sha256 = h.digest();
    out[clean(archive_entry_pathname(e))] = ff;
  }
  return out;
}

std::vector<std::string> differing_keys(const std::string& a, const std::string& b) {
  auto ja = nlohmann::json::parse(a, nullptr, false), jb = nlohmann::json::parse(b, nullptr, false);
  std::vector<std::string> out;
  if (!ja.is_object() || !jb.is_object()) return {"(not JSON objects)"};
  for (auto& [k, v] : ja.items())
    if (!jb.contains(k) || jb[k] != v) out.push_back(k);
  for (auto& [k, v] : jb.items())
    if (!ja.contains(k)) out.push_back(k);
  return out;
}

std::string facts_text(const std::optional<FileFacts>& f) {
  if (!f) return "absent";
  std::ostringstream s;
  s << "size " << f->size << ", mode " << std::oct << f->mode << std::dec;
  if (!f->link.empty()) s << ", -> " << f->link;
  if (!f->sha256.empty()) s << ", " << f->sha256.substr(0, 19);
  s << ", mtime " << f->mtime;
  return s.str();
}

}  // namespace

ImageDifference diff_images(ImageSource& a, ImageSource& b, size_t max_files) {
  Manifest ma = a.manifest(), mb = b.manifest();
  ImageDifference d{.a_digest = ma.digest(), .b_digest = mb.digest()};
  d.same = d.a_digest == d.b_digest;
  if (d.same) return d;
  ImageConfig ca = read_image_config(a, ma), cb = read_image_config(b, mb);
  auto la = ma.layers(), lb = mb.layers();
  d.a_layers = la.size(), d.b_layers = lb.size();
  d.config_differs = ma.config().digest != mb.config().digest;
  if (d.config_differs) {
    auto ra = a.open_blob(ma.config()), rb = b.open_blob(mb.config());
    d.config_keys = differing_keys(read_all(*ra), read_all(*rb));
  }
  size_t n = std::min(ca.diff_ids.size(), cb.diff_ids.size());
  for (size_t i = 0; i < n && d.layer < 0; ++i)
    if (ca.diff_ids[i] != cb.diff_ids[i]) d.layer = int(i);
  if (d.layer < 0 && ca.diff_ids.size() != cb.diff_ids.size()) d.layer = int(n);
  if (d.layer < 0) return d;
  size_t at = size_t(d.layer);  // a layer only one side has: its files are all the difference
  std::map<std::string, FileFacts> fa = at < la.size() ? list_layer(a, la[at]) : std::map<std::string, FileFacts>{};
  std::map<std::string, FileFacts> fb = at < lb.size() ? list_layer(b, lb[at]) : std::map<std::string, FileFacts>{};
  auto add = [&](const std::string& p, std::optional<FileFacts> x, std::optional<FileFacts> y) {
    if (d.files.size() < max_files)
      d.files.push_back({p, std::move(x), std::move(y)});
    else
      ++d.more_files;
  };
  for (auto& [p, f] : fa) {
    auto it = fb.find(p);
    if (it == fb.end())
      add(p, f, std::nullopt);
    else if (!(it->second == f))
      add(p, f, it->second);
  }
  for (auto& [p, f] : fb)
    if (!fa.count(p)) add(p, std::nullopt, f);
  std::sort(d.files.begin(), d.files.end(), [](const auto& x, const auto& y) { return x.path < y.path; });
  return d;
}

std::string render_difference(const ImageDifference& d) {
  std::ostringstream s;
  if (d.same) {
    s << "same: " << d.a_digest << "\n";
    return s.str();
  }
  s << "differ: " << d.a_digest << " vs " << d.b_digest << "\n";
  if (d.config_differs) {
    s << "  config differs in:";
    for (const auto& k : d.config_keys) s << " " << k;
    s << "\n";
  }
  if (d.layer < 0) {
    s << "  every layer is the same\n";
    return s.str();
  }
  s << "  first differing layer: " << d.layer << " (of " << d.a_layers << " and " << d.b_layers << ")\n";
  for (const auto& f : d.files) s << "  " << f.path << ": " << facts_text(f.a) << " | " << facts_text(f.b) << "\n";
  if (d.more_files) s << "  ... and " << d.more_files << " more\n";
  return s.str();
}

}  // namespace imgtool::image
