// imgtool reproduce (issue 35): is the image in the registry what this matrix builds?
//
//   ReproduceReport r = reproduce({.refs = {ref}, .cells = src.cells, .engine = &docker, …});
//
// For each image: its config's labels name the cell (io.imgtool.tag), the inputs it was made from
// (io.imgtool.inputs-hash, io.imgtool.kb-version) and its clock (io.imgtool.source-date-epoch).
// The cell, generated again from the matrix as it is now, must have the same inputs hash (else
// nothing is built: "the inputs changed"); it is then rebuilt with `docker build --no-cache`
// (builder::build_cells: every step runs again, its first stage removed after), and the rebuild is
// normalized with the image's epoch (image/normalize.h). Equal manifest digests: reproduced. An
// image published without normalization is normalized the same way and compared again; when the
// digests still differ, the first differing layer and its files are named (image/image_diff.h).
// The same config (so the same image ID) and every layer's tar equal, only the gzip encoding of a
// layer not: reproduced, and the line says so (imgtool's compressor has given two encodings of one
// tar under load: issue 35's note).
// The labels are the image's own word and are not trusted: they only choose what to rebuild, and
// the verdict is the comparison of bytes.
//
// Images of one cell and inputs share one rebuild. The rebuilt image and the normalized copies go
// when the call ends; the work folder is private. A failing image never stops the others.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "builder/generated_cell.h"
#include "engine/engine.h"
#include "image/image_diff.h"
#include "image/normalize.h"
#include "image/transport.h"

namespace imgtool::reproduce {

enum class Outcome {
  reproduced,  // the rebuild, normalized, has the image's digest (or its normalized digest)
  differs,     // rebuilt, and something differs: `difference` says where
  not_rebuilt  // the labels name no cell of the matrix, the inputs changed, the build failed, …: `why`
};
std::string to_string(Outcome o);

struct Reproduction {
  std::string ref;  // as given
  std::string tag;  // the cell, from io.imgtool.tag
  Outcome outcome = Outcome::not_rebuilt;
  std::string why;                    // not_rebuilt: one line; reproduced: how (as published / once normalized)
  std::string digest;                 // the image's manifest digest
  std::string normalized_digest;      // the image normalized ("" when not needed: it was the rebuild's digest)
  std::string rebuilt_digest;         // the rebuild, normalized
  std::string rebuilt_image_id;       // the engine's ID of the rebuild (before normalization)
  int64_t epoch = 0;                  // SOURCE_DATE_EPOCH the image carries
  image::ImageDifference difference;  // differs: where
  double seconds = 0;                 // the rebuild (shared by the images of one cell)
};

struct ReproduceReport {
  std::vector<Reproduction> images;  // in the order given
  bool ok() const;                   // every image reproduced
};

struct ReproduceRequest {
  std::vector<std::string> refs;              // docker://…, docker-daemon:…, oci:…
  std::vector<builder::GeneratedCell> cells;  // the matrix as it is now, generated (builder/cell_source.h)
  std::string kb_version;                     // of those cells
  engine::Engine* engine = nullptr;           // required: the rebuild
  image::TransportOptions transport;          // to read the images (one registry session)
  std::filesystem::path work_dir;             // required: the state, logs and normalized copies go here
  std::vector<image::NormalizeRule> rules;    // image/normalize_rules.tsv as read
  std::chrono::seconds build_timeout{3600};
  int jobs = 2;                                      // compression threads
  std::function<void(const std::string&)> on_event;  // progress lines (the library never prints)
};

ReproduceReport reproduce(const ReproduceRequest& req);

// One line per image, and the difference where there is one: what `imgtool reproduce` prints.
std::string render(const ReproduceReport& r);

}  // namespace imgtool::reproduce
