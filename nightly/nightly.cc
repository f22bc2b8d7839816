#include "nightly/nightly.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <optional>

#include "builder/task_pool.h"
#include "core/error.h"
#include "nightly/nightly_tag.h"
#include "nightly/step_records.h"

namespace imgtool::nightly {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Now, UTC, in strftime's `format`.
std::string utc(const char* format) {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, format, std::gmtime(&t));
  return buf;
}

// YYYYMMDD -> YYYY-MM-DD (anything else as it is: kb_state names it).
std::string iso_day(const std::string& yyyymmdd) {
  return yyyymmdd.size() == 8 ? yyyymmdd.substr(0, 4) + "-" + yyyymmdd.substr(4, 2) + "-" + yyyymmdd.substr(6)
                              : yyyymmdd;
}

NightlyCell cell_header(const builder::GeneratedCell& g, const builder::CellBuild& b) {
  NightlyCell c;
  c.tag = g.cell.tag;
  c.image = b.image;
  c.image_id = b.image_id;
  c.built_image_id = b.built_id;
  c.inputs_hash = g.inputs_hash;
  c.kb_version = g.kb_version;
  c.base = !g.cell.base_digest.empty() ? g.cell.base_image + "@" + g.cell.base_digest
           : !g.cell.base_id.empty()   ? g.cell.base_image + " (image ID " + g.cell.base_id + ")"
                                       : g.cell.base_image;
  c.variant = g.cell.variant;
  c.cuda = g.cell.cuda;
  c.python = g.cell.python;
  c.paddle = g.cell.paddle;
  c.cudnn = g.cell.cudnn;
  c.cuda_archs = g.cell.cuda_archs;
  c.build = {b.status, b.attempts, b.seconds, b.log, b.error};
  return c;
}

// The smoke step's record from the smoke library's typed result: the one place it is mapped. A
// document that contradicts the image it ran in is no smoke of that image (smoke/binding.h).
SmokeStep smoke_step(SmokeOutcome o) {
  smoke::SmokeResult& res = o.judged.result;
  SmokeStep s{.status = res.passed() && res.binding.empty() ? SmokeStatus::pass : SmokeStatus::fail,
              .reasons = res.reasons,
              .warnings = res.warnings,
              .throughput = std::move(o.throughput),
              .evidence = std::move(o.evidence)};
  for (const auto& line : res.binding) s.reasons.push_back("binding: " + line);
  return s;
}

// Everything one nightly run needs per cell.
struct Pipeline {
  const NightlyOptions& opt;
  builder::StateStore& store;
  NightlySteps* steps;
  std::string steps_missing;
  std::string today;  // YYYYMMDD

  void event(const std::string& line) const {
    if (opt.build.on_event) opt.build.on_event(line);
  }
  std::string smoke_key(const builder::CellBuild& b) const { return b.image_id + "|gpus=" + opt.gpus; }

  std::optional<SmokeStep> cached_smoke(const builder::GeneratedCell& g, const builder::CellBuild& b) {
    if (opt.fresh_smoke) return std::nullopt;
    return passed_smoke(store, g.cell.tag, smoke_key(b));
  }

  SmokeStep smoke(const builder::GeneratedCell& g, const builder::CellBuild& b) {
    if (!steps) return {.status = SmokeStatus::error, .error = steps_missing};
    if (auto c = cached_smoke(g, b)) return *c;
    event("smoke " + g.cell.tag);
    auto t0 = Clock::now();
    SmokeStep s;
    try {
      s = smoke_step(steps->smoke(g, b));
    } catch (const std::exception& e) {
      s = {.status = SmokeStatus::error, .error = e.what()};
    }
    s.seconds = since(t0);
    record_smoke(store, g.cell.tag, smoke_key(b), s);
    event("smoke " + g.cell.tag + ": " + to_string(s.status));
    return s;
  }

  // The gate reads only the image's contents (fixed by its ID = config digest), the tag its claims
  // are read against (the record's tag) and the KB: a pass for that key stays a pass.
  std::string gate_key(const builder::GeneratedCell& g, const builder::CellBuild& b) const {
    return b.image_id + "|kb=" + g.kb_version;
  }

  // The release gate on the built image, before anything is pushed. --fresh-smoke re-runs it too.
  // `inventory` gets the gate's scan of the layers, for publish's SBOM.
  GateStep gate(const builder::GeneratedCell& g, const builder::CellBuild& b,
                std::shared_ptr<const sbom::Inventory>& inventory) {
    if (!steps) return {.status = GateStatus::error, .error = steps_missing};
    if (!opt.fresh_smoke && gate_passed(store, g.cell.tag, gate_key(g, b))) return {.status = GateStatus::cached};
    event("gate " + g.cell.tag + " (claims vs contents)");
    auto t0 = Clock::now();
    GateStep s;
    try {
      verify::GateResult o = steps->gate(g, b);
      s = {.status = o.passed() ? GateStatus::pass : GateStatus::fail, .failed = o.failed_lines()};
      if (o.inventory) inventory = std::make_shared<const sbom::Inventory>(std::move(*o.inventory));
    } catch (const std::exception& e) {
      s = {.status = GateStatus::error, .error = e.what()};
    }
    s.seconds = since(t0);
    record_gate(store, g.cell.tag, gate_key(g, b), s.status);
    return s;
  }

  // Publishes (or finds unchanged) the cell, filling c.publish and, from what was pushed, its
  // layers and SBOM packages.
  void publish(const builder::GeneratedCell& g, const builder::CellBuild& b, NightlyCell& c,
               const sbom::Inventory* inventory) {
    if (!steps) {
      c.publish = {.status = PublishStatus::failed, .error = steps_missing};
      return;
    }
    std::string ref = cell_reference(opt.target, g.cell).within_transport();
    if (auto done = unchanged(g, b, ref)) {
      c.publish = *done;
      c.layers = layers_of(g, done->digest);
      attest_tonight(g, b, c);
      dated_tag(g, c);
      return;
    }
    event("publish " + g.cell.tag + " → " + ref + " (push by digest, sign, move tag)");
    auto t0 = Clock::now();
    try {
      release::PublishResult p = steps->publish(g, b, c.smoke.evidence ? &*c.smoke.evidence : nullptr, inventory);
      record_publish(store, g.cell.tag, ref, {p.digest, b.image_id});
      c.publish = {p.already_signed ? PublishStatus::unchanged : PublishStatus::published,
                   since(t0),
                   ref,
                   p.digest,
                   p.signature_tag,
                   ""};
      c.layers = p.layers.empty() ? layers_of(g, p.digest) : sizes_of(p.layers);
      c.packages = p.packages;
      dated_tag(g, c);
    } catch (const std::exception& e) {
      c.publish = {PublishStatus::failed, since(t0), ref, "", "", e.what()};
    }
  }

  // An unchanged digest still gets tonight's evidence when the smoke ran tonight (a cached smoke's was
  // attested the night it ran): otherwise the report would say one thing and the registry another.
  void attest_tonight(const builder::GeneratedCell& g, const builder::CellBuild& b, NightlyCell& c) {
    if (c.smoke.status != SmokeStatus::pass || !c.smoke.evidence) return;
    try {
      steps->attest(g, b, c.publish.digest, *c.smoke.evidence);
    } catch (const std::exception& e) {
      c.publish.status = PublishStatus::failed;
      c.publish.error = std::string("tonight's smoke evidence was not attested for the unchanged digest: ") + e.what();
    }
  }

  // Tonight's dated tag onto the published digest: history for rollback and `imgtool prune --keep N`.
  // Not writing it leaves the cell published (the tag that matters moved); the report says so.
  void dated_tag(const builder::GeneratedCell& g, NightlyCell& c) {
    std::string tag = nightly_tag(g.cell.tag, today);
    try {
      steps->add_tag(g, c.publish.digest, tag);
      c.publish.dated_tag = tag;
    } catch (const std::exception& e) {
      event("dated tag " + tag + " not written: " + e.what());
    }
  }

  // Sizes are report detail: a registry that cannot answer leaves them out, never fails the cell.
  std::vector<LayerSize> layers_of(const builder::GeneratedCell& g, const std::string& digest) {
    try {
      return steps->layers_of(g, digest);
    } catch (const std::exception& e) {
      event("layers of " + g.cell.tag + " not read: " + e.what());
      return {};
    }
  }

  // Published before for this very image, and the tag still names that digest.
  std::optional<PublishStep> unchanged(const builder::GeneratedCell& g, const builder::CellBuild& b,
                                       const std::string& ref) {
    auto rec = last_publish(store, g.cell.tag, ref);
    if (!rec || rec->image_id != b.image_id) return std::nullopt;
    try {
      if (steps->registry_digest(g) != rec->digest) return std::nullopt;
    } catch (const std::exception&) {
      return std::nullopt;  // the publish attempt reports the registry's error
    }
    return PublishStep{.status = PublishStatus::unchanged, .ref = ref, .digest = rec->digest};
  }

  // The header and the smoke: true when the cell goes on to its gate.
  bool smoked(const builder::GeneratedCell& g, const builder::CellBuild& b, NightlyCell& c) {
    c = cell_header(g, b);
    if (!c.build.ok()) {
      c.smoke.error = c.gate.error = c.publish.error = "build failed";
      return false;
    }
    c.smoke = smoke(g, b);
    if (c.smoke.ok()) return true;
    c.gate.error = "smoke did not pass";
    c.publish.error = "smoke did not pass: the tag is not moved";
    return false;
  }

  // Gate, then (passed only) publish. Runs on a pool thread: never throws.
  void gated_publish(const builder::GeneratedCell& g, const builder::CellBuild& b, NightlyCell& c) {
    try {
      std::shared_ptr<const sbom::Inventory> inventory;  // the gate's, carried to publish with the cell
      c.gate = gate(g, b, inventory);
      if (!c.gate.ok()) {
        c.publish.error = "release gate did not pass (claims contradict contents): the tag is not moved";
        return;
      }
      publish(g, b, c, inventory.get());
    } catch (const std::exception& e) {  // the state store failing, say: this cell fails, not the run
      if (c.gate.ok())
        c.publish = {.status = PublishStatus::failed, .error = e.what()};
      else
        c.gate = {.status = GateStatus::error, .error = e.what()};
    }
  }
};

}  // namespace

NightlyReport run_nightly(const std::vector<builder::GeneratedCell>& cells, const NightlyOptions& opt,
                          engine::Engine& docker, builder::StateStore& store, NightlySteps* steps,
                          const std::string& steps_missing) {
  auto t0 = Clock::now();
  NightlyReport report;
  report.matrix = opt.matrix;
  report.registry = opt.target.repository();
  report.gpus = opt.gpus;
  report.shards = {opt.shard.text()};
  report.started = utc("%Y-%m-%dT%H:%M:%SZ");
  std::string today = opt.today.empty() ? utc("%Y%m%d") : opt.today;
  report.kb = kb_state(opt.kb, iso_day(today));
  builder::BuildReport built = builder::build_cells(cells, opt.build, docker, store);
  Pipeline p{opt, store, steps, steps_missing, today};
  report.cells.resize(cells.size());
  // Every smoke first, one at a time, nothing else running: throughput is measured on a quiet
  // host. Then the gates and publishes (docker save, uploads: mostly I/O) of the cells that
  // passed, -j at a time; each cell is still gated before it is published.
  std::vector<size_t> passed;
  for (size_t i = 0; i < cells.size(); ++i)
    if (p.smoked(cells[i], built.cells[i], report.cells[i])) passed.push_back(i);
  {
    builder::TaskPool pool(std::max(1, opt.build.jobs));
    for (size_t i : passed) pool.submit([&, i] { p.gated_publish(cells[i], built.cells[i], report.cells[i]); });
    pool.wait();
  }
  report.builder = built.builder;
  report.docker_builds = built.docker_builds;
  report.seconds = since(t0);
  return report;
}

void stage_promotions(NightlyReport& report, const image::Reference& stage, const image::Reference& release) {
  report.release = release.repository();
  for (auto& c : report.cells) {
    if (!c.publish.ok()) continue;
    image::Reference published = image::parse_docker_reference(c.publish.ref);
    auto repo = published.below(stage);
    if (!repo) continue;
    c.promote = "imgtool promote " + published.with_digest(c.publish.digest).str() + " --to " +
                release.under(*repo).str() + " --tag " + c.tag + " --key RELEASE.pub --sign-key RELEASE.key";
  }
}

image::Reference parse_registry(const std::string& text) {
  try {
    return image::parse_namespace(text);
  } catch (const InputError& e) {
    throw InputError(std::string("--registry: ") + e.what());
  }
}

image::Reference cell_reference(const image::Reference& target, const matrix::Cell& c) {
  return target.under(c.repository).with_tag(c.tag);
}

}  // namespace imgtool::nightly
