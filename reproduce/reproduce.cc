#include "reproduce/reproduce.h"

#include <unistd.h>

#include <chrono>
#include <map>
#include <sstream>

#include "builder/build_driver.h"
#include "builder/state_store.h"
#include "core/error.h"
#include "image/config.h"
#include "matrix/labels.h"

namespace imgtool::reproduce {
namespace {

namespace fs = std::filesystem;

// What an image's labels say it is (its own word: it only chooses what to rebuild).
struct Claimed {
  std::string tag, inputs_hash, kb_version, digest, base_id;
  int64_t epoch = 0;
};

// The image's manifest digest and labels; throws (the image cannot be read) for the caller to record.
Claimed read_claims(const std::string& ref, const image::TransportOptions& t) {
  auto src = image::open_source(ref, t);
  image::Manifest m = src->manifest();
  image::ImageConfig c = image::read_image_config(*src, m);
  return {c.label(labels::kTag),       c.label(labels::kInputsHash),
          c.label(labels::kKbVersion), m.digest(),
          c.label(labels::kBaseId),    labels::source_date_epoch(c.label(labels::kSourceDateEpoch))};
}

// Why an image's cell cannot be rebuilt from this matrix; "" when it can.
std::string why_not(const Claimed& c, const builder::GeneratedCell* cell, const std::string& kb_version) {
  if (c.tag.empty()) return std::string("no ") + labels::kTag + " label: not an image imgtool built";
  if (c.epoch <= 0)
    return std::string("no ") + labels::kSourceDateEpoch +
           " label (a number): the image was built before cells carried their clock";
  if (!cell) return "the matrix has no cell " + c.tag + " (--matrix names the matrix the image was built from)";
  if (!cell->generate_error.empty()) return "cell " + c.tag + " cannot be generated: " + cell->generate_error;
  if (c.kb_version != kb_version)
    return "the image was made with KB " + c.kb_version + ", the matrix is planned with KB " + kb_version +
           " (--kb names another knowledge base)";
  if (c.inputs_hash != cell->inputs_hash)
    return "the cell's inputs changed since the image was built: it carries " + c.inputs_hash + ", the matrix gives " +
           cell->inputs_hash + " now (imgtool generate writes what the hash covers, inputs.txt)";
  // The engine holds the base (builder/base_pin.h) and it is not the one the image was built on.
  if (!cell->cell.base_id.empty() && !c.base_id.empty() && c.base_id != cell->cell.base_id)
    return "the base changed since the image was built: it was built on " + cell->cell.base_image + " = " + c.base_id +
           ", the engine's " + cell->cell.base_image + " is " + cell->cell.base_id + " now";
  return "";
}

const builder::GeneratedCell* cell_named(const std::vector<builder::GeneratedCell>& cells, const std::string& tag) {
  for (const auto& c : cells)
    if (c.cell.tag == tag) return &c;
  return nullptr;
}

void say(const ReproduceRequest& req, const std::string& line) {
  if (req.on_event) req.on_event(line);
}

// `src` normalized into an OCI layout at `dir`; its manifest digest. Every layer afresh: never from
// the normalized-layer cache (image/normalized_cache.h), which made what is being checked.
std::string normalize_into(image::ImageSource& src, const fs::path& dir, int64_t epoch, const ReproduceRequest& req) {
  auto dst = image::open_destination(image::parse_reference("oci:" + dir.string() + ":image"));
  image::NormalizeOptions o{.epoch = epoch, .rules = req.rules, .jobs = req.jobs, .spool_dir = req.work_dir};
  return image::normalize_image(src, *dst, o, "image").manifest.digest();
}

// One rebuild of `cell` (docker build --no-cache), normalized into `dir`: its digest and image ID,
// or the reason it failed. The engine's image goes as soon as it is normalized.
struct Rebuilt {
  std::string digest, image_id, error;
  double seconds = 0;
};

Rebuilt rebuild(const builder::GeneratedCell& cell, int64_t epoch, const fs::path& dir, builder::StateStore& store,
                const ReproduceRequest& req) {
  builder::BuildOptions opt{.log_dir = req.work_dir / "logs",
                            .image_prefix = "imgtool-reproduce/" + std::to_string(::getpid()) + "/",
                            .timeout = req.build_timeout,
                            .force = true,
                            .no_cache = true,
                            .on_event = req.on_event};
  auto t0 = std::chrono::steady_clock::now();
  builder::BuildReport rep = builder::build_cells({cell}, opt, *req.engine, store);
  const builder::CellBuild& b = rep.cells.at(0);
  Rebuilt out{.image_id = b.image_id,
              .seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
  if (b.status == builder::CellStatus::failed) {
    out.error = "the rebuild failed: " + b.error;
    return out;
  }
  try {
    auto src = req.engine->save(b.image);
    out.digest = normalize_into(*src, dir, epoch, req);
  } catch (const std::exception& e) {
    out.error = std::string("the rebuild could not be normalized: ") + e.what();
  }
  try {
    req.engine->remove(b.image);
  } catch (const std::exception& e) {
    say(req, "reproduce: could not remove " + b.image + ": " + e.what());
  }
  return out;
}

// The image against the rebuild: as published, else once normalized, else where they differ.
void compare(Reproduction& r, const Claimed& c, const Rebuilt& b, const fs::path& rebuilt_dir, const fs::path& dir,
             const ReproduceRequest& req) {
  r.rebuilt_digest = b.digest;
  r.rebuilt_image_id = b.image_id;
  r.seconds = b.seconds;
  if (c.digest == b.digest) {
    r.outcome = Outcome::reproduced;
    r.why = "the published bytes";
    return;
  }
  auto published = image::open_source(r.ref, req.transport);
  r.normalized_digest = normalize_into(*published, dir, c.epoch, req);
  if (r.normalized_digest == b.digest) {
    r.outcome = Outcome::reproduced;
    r.why = "once normalized (the image was published without normalization)";
    return;
  }
  auto a = image::open_source("oci:" + dir.string() + ":image");
  auto rebuilt = image::open_source("oci:" + rebuilt_dir.string() + ":image");
  r.difference = image::diff_images(*a, *rebuilt);
  r.outcome = Outcome::differs;
  if (!r.difference.config_differs && r.difference.layer < 0) {  // the same config and every layer's tar
    r.outcome = Outcome::reproduced;
    r.why = "the same image ID and layer contents; the layers' gzip encoding differs, so the manifest digest does not";
  }
}

// The images of one cell and inputs, against one rebuild.
void reproduce_group(std::vector<Reproduction>& out, const std::vector<size_t>& members,
                     const std::vector<Claimed>& claims, builder::StateStore& store, const ReproduceRequest& req,
                     size_t group) {
  const Claimed& first = claims[members.front()];
  const builder::GeneratedCell* cell = cell_named(req.cells, first.tag);
  std::string why = why_not(first, cell, req.kb_version);
  if (why.empty()) {
    fs::path rebuilt_dir = req.work_dir / ("rebuilt-" + std::to_string(group));
    say(req, "reproduce: rebuilding " + first.tag + " with --no-cache (" + std::to_string(members.size()) +
                 " image(s) to compare)");
    Rebuilt b = rebuild(*cell, first.epoch, rebuilt_dir, store, req);
    why = b.error;
    for (size_t i : members) {
      if (!why.empty()) break;
      fs::path dir = req.work_dir / ("image-" + std::to_string(i));
      try {
        compare(out[i], claims[i], b, rebuilt_dir, dir, req);
      } catch (const std::exception& e) {
        out[i].why = std::string("the image could not be compared: ") + e.what();
      }
      fs::remove_all(dir);
    }
    fs::remove_all(rebuilt_dir);
  }
  if (!why.empty())
    for (size_t i : members) out[i].why = why;
}

}  // namespace

std::string to_string(Outcome o) {
  switch (o) {
    case Outcome::reproduced:
      return "reproduced";
    case Outcome::differs:
      return "differs";
    case Outcome::not_rebuilt:
      break;
  }
  return "not rebuilt";
}

bool ReproduceReport::ok() const {
  for (const auto& i : images)
    if (i.outcome != Outcome::reproduced) return false;
  return !images.empty();
}

ReproduceReport reproduce(const ReproduceRequest& req) {
  if (!req.engine) throw Error("reproduce: no engine given (ReproduceRequest::engine)");
  if (req.work_dir.empty()) throw Error("reproduce: no work folder given (ReproduceRequest::work_dir)");
  ReproduceReport rep;
  std::vector<Claimed> claims(req.refs.size());
  std::map<std::string, std::vector<size_t>> groups;  // what the labels claim -> images
  for (size_t i = 0; i < req.refs.size(); ++i) {
    rep.images.push_back({.ref = req.refs[i]});
    try {
      claims[i] = read_claims(req.refs[i], req.transport);
    } catch (const std::exception& e) {
      rep.images[i].why = std::string("the image cannot be read: ") + e.what();
      continue;
    }
    rep.images[i].tag = claims[i].tag;
    rep.images[i].digest = claims[i].digest;
    rep.images[i].epoch = claims[i].epoch;
    const Claimed& c = claims[i];  // one rebuild serves the images that claim the same of all of these
    groups[c.tag + "\n" + c.inputs_hash + "\n" + c.kb_version + "\n" + std::to_string(c.epoch)].push_back(i);
  }
  builder::StateStore store(req.work_dir / "state");
  size_t n = 0;
  for (const auto& [key, members] : groups) reproduce_group(rep.images, members, claims, store, req, n++);
  return rep;
}

std::string render(const ReproduceReport& r) {
  std::ostringstream o;
  for (const auto& i : r.images) {
    o << to_string(i.outcome) << ": " << i.ref;
    if (i.outcome == Outcome::reproduced)
      o << " " << i.digest << " (cell " << i.tag << ", rebuilt with --no-cache in " << static_cast<int>(i.seconds)
        << " s; " << i.why << ")\n";
    else if (i.outcome == Outcome::differs)
      o << " (cell " << i.tag << "; the image, then the rebuild, both normalized with epoch " << i.epoch << ")\n"
        << image::render_difference(i.difference);
    else
      o << ": " << i.why << "\n";
  }
  return o.str();
}

}  // namespace imgtool::reproduce
