#include "image/oci_layout.h"

#include <unistd.h>

#include <fstream>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/json_file.h"
#include "image/blob.h"

namespace imgtool::image {
namespace {

nlohmann::json read_index(const std::filesystem::path& dir) {
  auto p = dir / "index.json";
  if (!std::filesystem::exists(p))
    return {{"schemaVersion", 2}, {"mediaType", media::kOciIndex}, {"manifests", nlohmann::json::array()}};
  auto j = parse_json_or_discarded(read_file(p));
  if (j.is_discarded() || !j.contains("manifests")) throw Error(p.string() + ": not an OCI image index");
  return j;
}

}  // namespace

std::filesystem::path oci_blob_path(const std::filesystem::path& dir, const std::string& digest) {
  if (!is_sha256_digest(digest)) throw Error("not a sha256 digest: " + digest);
  return dir / "blobs" / "sha256" / digest.substr(7);
}

OciSource::OciSource(std::filesystem::path dir, std::string tag) : dir_(std::move(dir)), tag_(std::move(tag)) {
  if (!std::filesystem::exists(dir_ / "oci-layout"))
    throw InputError(dir_.string() + ": expected an OCI image layout (oci-layout file), found none");
}

std::string OciSource::describe() const { return "oci:" + dir_.string() + (tag_.empty() ? "" : ":" + tag_); }

Manifest OciSource::manifest() {
  auto idx = read_index(dir_);
  std::vector<Descriptor> hits;
  for (auto& m : idx["manifests"]) {
    Descriptor d = m.get<Descriptor>();
    auto it = d.annotations.find(kRefNameAnnotation);
    if (tag_.empty() || (it != d.annotations.end() && it->second == tag_)) hits.push_back(d);
  }
  if (hits.empty()) throw InputError(describe() + ": no manifest with that tag in index.json");
  if (hits.size() > 1) throw InputError(describe() + ": several manifests in index.json; name one with :TAG");
  auto r = open_blob(hits[0]);
  return Manifest{read_all(*r), hits[0].media_type};
}

std::unique_ptr<BlobReader> OciSource::open_blob(const Descriptor& d) {
  return std::make_unique<VerifyingReader>(std::make_unique<FileReader>(oci_blob_path(dir_, d.digest)), d, describe());
}

OciDestination::OciDestination(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::filesystem::create_directories(dir_ / "blobs" / "sha256");
  if (!std::filesystem::exists(dir_ / "oci-layout"))
    write_file_atomic(dir_ / "oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
}

std::string OciDestination::describe() const { return "oci:" + dir_.string(); }

bool OciDestination::has_blob(const Descriptor& d) {
  std::error_code ec;
  auto size = std::filesystem::file_size(oci_blob_path(dir_, d.digest), ec);
  return !ec && static_cast<int64_t>(size) == d.size;
}

// The blob appears under its digest complete and checked, or not at all: written to a mkstemp
// file beside it (the layout is the user's folder: no predictable name to plant), fsynced, renamed.
void OciDestination::put_blob(const Descriptor& d, BlobReader& content) {
  AtomicFile out(oci_blob_path(dir_, d.digest));
  Sha256 sha;
  int64_t n = 0;
  std::vector<char> buf(1 << 20);
  while (size_t got = content.read(buf.data(), buf.size())) {
    sha.update(buf.data(), got);
    out.write({buf.data(), got});
    n += static_cast<int64_t>(got);
  }
  std::string digest = sha.digest();
  if (digest != d.digest || n != d.size)
    throw Error(describe() + ": blob written as " + digest + " (" + std::to_string(n) + " bytes), expected " +
                d.digest + " (" + std::to_string(d.size) + " bytes)");
  out.commit();
}

void OciDestination::put_manifest(const Manifest& m, const std::string& tag) {
  Descriptor d{m.media_type, m.digest(), static_cast<int64_t>(m.raw.size())};
  StringReader r(m.raw);
  if (!has_blob(d)) put_blob(d, r);
  if (!tag.empty()) d.annotations[kRefNameAnnotation] = tag;
  std::lock_guard lk(index_mu_);
  auto idx = read_index(dir_);
  nlohmann::json kept = nlohmann::json::array();
  for (auto& e : idx["manifests"]) {
    bool same_tag = !tag.empty() && e.contains("annotations") && e["annotations"].value(kRefNameAnnotation, "") == tag;
    bool same_untagged = tag.empty() && e.value("digest", "") == d.digest;
    if (!same_tag && !same_untagged) kept.push_back(e);
  }
  kept.push_back(d);
  idx["manifests"] = kept;
  write_file_atomic(dir_ / "index.json", idx.dump());
}

}  // namespace imgtool::image
