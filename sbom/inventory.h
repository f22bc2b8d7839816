// What software an image holds, read from its layers in ONE streaming pass
// through verify's ContentsTree (no second tar reader): the same scan that
// gives verify's ContentsFacts (Python, Paddle, NVIDIA libraries) also keeps
// the few files an SBOM needs.
//
// Where each package comes from
//   deb      /var/lib/dpkg/status (paragraphs whose Status ends "installed")
//            and /var/lib/dpkg/status.d/* (distroless: one paragraph a file).
//   python   every <dir>/{site,dist}-packages/NAME-V.dist-info/METADATA,
//            NAME-V.egg-info/PKG-INFO or NAME-V.egg-info (a file): Name and
//            Version headers (the folder name when the headers are missing);
//            the site-packages folder is kept (a venv and the system Python
//            may each hold pip).
//   nvidia   ContentsFacts::libs (cudart, cublas, cudnn, tensorrt: sonames
//            and nvidia_* dist-infos, the most specific version).
//   os       PRETTY_NAME of /etc/os-release (or /usr/lib/os-release).
#pragma once
#include <string>
#include <vector>

#include "image/image.h"
#include "scan/contents_facts.h"
#include "scan/contents_tree.h"

namespace imgtool::sbom {

struct DebPackage {
  std::string name, version, arch;
};

struct PyDist {
  std::string name, version;
  std::string site;    // the site-packages folder
  std::string python;  // "3.11" when the folder says ("" for /usr/lib/python3/dist-packages)
};

struct NvidiaLib {
  std::string name, version;
  std::vector<std::string> paths;
};

struct Inventory {
  std::vector<DebPackage> debs;   // sorted by name, arch
  std::vector<PyDist> python;     // sorted by canonical name, version, site
  std::vector<NvidiaLib> nvidia;  // sorted by name
  std::string os;                 // "Debian GNU/Linux 12 (bookworm)" or ""
  scan::ContentsFacts facts;      // verify's facts from the same scan
};

// Which file bytes the scan must keep for gather_inventory() (beyond verify's).
bool keep_for_inventory(const std::string& path, int64_t size);

Inventory gather_inventory(const scan::ContentsTree& tree);

// Streams every layer of `m` from `src` once (in parallel, merged lowest first) and gathers.
Inventory scan_image(image::ImageSource& src, const image::Manifest& m);

// PEP 503 name: lower case, runs of -_. as one '-' ("PyYAML" -> "pyyaml").
std::string canonical_python_name(const std::string& name);

// dpkg status text -> installed packages (a paragraph without Status counts, as in status.d).
std::vector<DebPackage> parse_dpkg_status(const std::string& text);

}  // namespace imgtool::sbom
