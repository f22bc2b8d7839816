// `imgtool select`: the best tag for a host, why it fits, and why the
// better-looking ones do not. Candidates are matrix cells (a plan's kept cells)
// or a registry repository's tags read back as cells from their labels, kept
// only when their signature verifies (registry_candidates.h).
//   GPU host (driver + GPU): matrix::query_host — architecture rule, the
//     stricter driver floor (NVIDIA's or Paddle's, named), compatibility mode.
//   No NVIDIA driver: the best cpu image; gpu tags are passed over with why.
// Best = newest Paddle, then newest CUDA (GPU) / Python (CPU), then full compatibility.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "matrix/cell.h"
#include "matrix/kb.h"

namespace imgtool::host {

struct SelectHost {
  std::string driver;  // empty = no NVIDIA driver (cpu images only)
  std::string gpu;     // KB name, family name or nvidia-smi device name
  std::string from;    // "given by hand" | "this host (doctor)"
  // The host's CPU ("amd64" | "arm64"; `uname -m` on this host). Empty: the GPU's KB row says
  // (host_cpu: the Grace superchips, GB10, Jetson are arm64), else amd64, said as assumed.
  std::string cpu_arch;
};

struct SelectPolicy {
  // Accept GPU tags whose compiled GPU code is unknown (matrix::HostQuery::allow_unknown_archs);
  // each such recommendation says so.
  bool allow_unknown_archs = false;
  // Each candidate's platform ("linux/arm64"), read from its image config; a tag not listed is a
  // matrix cell, which imgtool builds for linux/amd64.
  std::map<std::string, std::string> platforms;
};

struct PassedOver {
  std::string tag, rule, why;
};

struct SelectResult {
  std::string host;  // one line describing the host
  std::optional<matrix::Cell> chosen;
  std::vector<std::string> why;         // why the chosen tag fits
  std::vector<PassedOver> passed_over;  // better-looking tags that do not fit (and refused ones)
  // Registry candidates: the repository (HOST/REPO) and the digest the chosen tag's signature
  // was verified on, so what is pulled is what was checked, whatever the tag does next.
  std::string repository, digest;
};

// `refused` (e.g. unsigned registry tags) are reported first among passed_over.
// Throws InputError for a bad driver version or an unknown/ambiguous GPU.
SelectResult select_tag(const std::vector<matrix::Cell>& cells, const std::vector<PassedOver>& refused,
                        const matrix::KnowledgeBase& kb, const SelectHost& host, const SelectPolicy& policy = {});

nlohmann::json to_json(const SelectResult& r);
std::string render_text(const SelectResult& r);

}  // namespace imgtool::host
