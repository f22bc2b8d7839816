// A two-layer sample image (dpkg status, venv and system site-packages, a whiteout, os-release, a
// CUDA library) shared by the SBOM tests and verify's SBOM-row tests.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "scan/testing/layers.h"

namespace imgtool::sbom::testing {

using scan::testing::make_tar;

inline const char* kStatus =
    "Package: libc6\nStatus: install ok installed\nArchitecture: amd64\nMulti-Arch: same\nVersion: 2.36-9+deb12u4\n"
    "Description: GNU C Library\n continuation line\n\n"
    "Package: removed-pkg\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 1.0\n\n"
    "Package: zlib1g\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1:1.2.13.dfsg-1\n";

inline std::string lower_layer() {
  return make_tar(
      {{"var/lib/dpkg/status", kStatus},
       {"usr/lib/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n"},
       {"etc/os-release", "../usr/lib/os-release", 'l'},
       {"opt/venv/lib/python3.11/site-packages/pip-24.3.1.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: pip\nVersion: 24.3.1\n\nlong description\nName: not-a-header\n"},
       {"opt/venv/lib/python3.11/site-packages/PyYAML-6.0.2.dist-info/METADATA", "Name: PyYAML\nVersion: 6.0.2\n"},
       {"opt/venv/lib/python3.11/site-packages/old-1.0.dist-info/METADATA", "Name: old\nVersion: 1.0\n"},
       {"usr/lib/python3/dist-packages/six-1.16.0.egg-info", "Metadata-Version: 1.1\nName: six\nVersion: 1.16.0\n"},
       {"usr/lib/python3.11/os.py", ""},
       {"usr/local/cuda/lib64/libcudart.so.12.6.77", "elf"}},
      "gzip");
}

// Removes `old` (a whiteout) and adds pip to the system Python as well.
inline std::string upper_layer() {
  return make_tar({{"opt/venv/lib/python3.11/site-packages/.wh.old-1.0.dist-info", ""},
                   {"usr/lib/python3/dist-packages/pip-23.0.1.dist-info/METADATA", "Name: pip\nVersion: 23.0.1\n"}},
                  "gzip");
}

inline nlohmann::json config() {
  return {{"architecture", "amd64"},
          {"os", "linux"},
          {"rootfs", {{"type", "layers"}, {"diff_ids", nlohmann::json::array()}}},
          {"created", "2026-11-23T20:10:11.123456789Z"},
          {"config",
           {{"Labels",
             {{"io.imgtool.tag", "3.2.0-cpu-py311"},
              {"io.imgtool.inputs-hash", "sha256:" + std::string(64, 'a')},
              {"io.imgtool.kb-version", "2026.11"},
              {"io.imgtool.variant", "cpu"},
              {"org.opencontainers.image.base.name", "debian:bookworm-slim"},
              {"org.opencontainers.image.base.digest", "sha256:" + std::string(64, 'b')}}}}}};
}

}  // namespace imgtool::sbom::testing
