// The digest each cell's image was published under, for files that must name
// images by digest (emit/k8s_jobs.h): from a nightly report (`--from-report DIR`,
// its cells' publish.digest) or, for cells it does not name, from the registry
// through image/ (one manifest GET per tag; the sha256 of those bytes). A cell
// neither knows is refused with one line naming it (InputError).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "emit/k8s_jobs.h"
#include "image/transport.h"

namespace imgtool::emit {

struct DigestSources {
  std::filesystem::path from_report;  // nightly report folder (nightly.json); "" = none
  std::string registry;               // HOST[:PORT]/NS
  bool ask_registry = true;           // resolve what the report does not name
  image::TransportOptions transport;  // TLS/http for the registry, and the command's registry session
};

std::vector<CellImage> with_digests(const std::vector<matrix::Cell>& cells, const DigestSources& src);

}  // namespace imgtool::emit
