// The dated nightly tag: "<cell tag>-nightly-<YYYYMMDD>" (e.g.
// 3.0.0-gpu-cuda12.6-cudnn9.5-nightly-20261123). One place for the scheme, so
// the code that writes such tags and `imgtool prune` (registry_prune.h),
// which groups them per cell and orders them by their date, cannot drift.
// Any other tag in a repository — a cell tag the nightly moves, a release
// tag, a `sha256-<hex>.sig/.att` — is not a nightly tag.
#pragma once
#include <optional>
#include <string>

namespace imgtool::nightly {

inline constexpr const char* kNightlyInfix = "-nightly-";

struct NightlyTag {
  std::string cell;  // the cell's tag ("3.0.0-gpu-cuda12.6-cudnn9.5")
  std::string date;  // "YYYYMMDD": orders a cell's nightly tags (newest = greatest)
};

// "<cell>-nightly-<YYYYMMDD>"; InputError for an empty cell or a date that is not 8 digits.
std::string nightly_tag(const std::string& cell_tag, const std::string& yyyymmdd);

// The parts of a nightly tag; nullopt for any other tag (no infix, empty
// cell, a date part that is not 8 digits).
std::optional<NightlyTag> parse_nightly_tag(const std::string& tag);

}  // namespace imgtool::nightly
