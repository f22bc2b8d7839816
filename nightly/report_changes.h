// What changed since the previous nightly run, per cell — the inputs hash, the knowledge base's
// version, the base image (and its digest), the built image, the published digest, and the package
// versions of the image's SBOM — and what a pull of the whole matrix costs (layers shared across
// cells counted once). The report renders both (nightly/report.cc).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "nightly/nightly_model.h"

namespace imgtool::nightly {

namespace fs = std::filesystem;

// Fills each cell's `changes` and `now.previous` from `before`. A cell not pushed again (same
// digest, no SBOM built this run) keeps the previous run's package list, so the next comparison
// still has it.
void compare_runs(NightlyReport& now, const NightlyReport& before);

// The nightly's memory of its last run, `<state>/last-nightly.json`: compares `now` with it (none
// yet, or unreadable: every cell is "first run") and then stores `now` for the next run.
void compare_with_last_run(NightlyReport& now, const fs::path& state_dir);

// A layer and the cells that carry it.
struct SharedLayer {
  LayerSize layer;
  std::vector<std::string> cells;
};

struct MatrixLayers {
  std::vector<SharedLayer> layers;  // every distinct layer of the published cells, largest first
  long long unique_bytes = 0;       // a pull of the whole matrix: each layer once
  long long total_bytes = 0;        // the cells pulled one by one: shared layers counted per cell
  int cells = 0;                    // cells with known layers
};

MatrixLayers matrix_layers(const NightlyReport& r);

// 1536 -> "1.5 KiB", 3 << 30 -> "3.0 GiB".
std::string human_bytes(long long n);

}  // namespace imgtool::nightly
