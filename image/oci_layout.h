// OCI image layout folders (image-spec image-layout.md): `oci-layout`,
// `index.json` (tags as `org.opencontainers.image.ref.name` annotations) and
// `blobs/sha256/<hex>`. Readable by skopeo (oci:DIR:TAG) and umoci (--layout).
//
//   OciSource       reads the manifest named by TAG (or the only one if no TAG).
//   OciDestination  writes blobs (hashed while written, renamed into place),
//                   then the manifest blob, then index.json (atomically) last.
#pragma once
#include <filesystem>
#include <mutex>

#include "image/image.h"

namespace imgtool::image {

inline constexpr const char* kRefNameAnnotation = "org.opencontainers.image.ref.name";

class OciSource : public ImageSource {
 public:
  OciSource(std::filesystem::path dir, std::string tag);
  Manifest manifest() override;
  std::unique_ptr<BlobReader> open_blob(const Descriptor& d) override;
  std::string describe() const override;

 private:
  std::filesystem::path dir_;
  std::string tag_;
};

class OciDestination : public ImageDestination {
 public:
  explicit OciDestination(std::filesystem::path dir);
  bool has_blob(const Descriptor& d) override;
  void put_blob(const Descriptor& d, BlobReader& content) override;
  void put_manifest(const Manifest& m, const std::string& tag) override;
  std::string describe() const override;

 private:
  std::filesystem::path dir_;
  std::mutex index_mu_;
};

std::filesystem::path oci_blob_path(const std::filesystem::path& dir, const std::string& digest);

}  // namespace imgtool::image
