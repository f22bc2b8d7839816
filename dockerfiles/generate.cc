#include "dockerfiles/generate.h"

#include <memory>
#include <set>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/paths.h"
#include "dockerfiles/cell_file.h"
#include "dockerfiles/cell_values.h"
#include "dockerfiles/lint.h"
#include "dockerfiles/stages.h"
#include "matrix/label_claims.h"
#include "matrix/labels.h"

namespace imgtool::dockerfiles {
namespace {

namespace fs = std::filesystem;
const char* kMarker = ".imgtool-generated";
const char* kLabelsFile = "labels.tsv";

// Lints every template file used and the rendered result; throws on findings.
void lint_or_throw(const std::vector<SourceFile>& sources, const std::string& dockerfile, const std::string& tag) {
  std::vector<LintFinding> all;
  std::set<std::string> seen;
  for (auto& s : sources)
    if (seen.insert(s.label).second)
      for (auto& f : lint_text(s.bytes, s.label)) all.push_back(f);
  if (all.empty())  // a value, not a template, made the download unsafe
    all = lint_text(dockerfile, tag + "/Dockerfile");
  if (!all.empty()) throw InputError("template lint failed (download without verification):\n" + format_findings(all));
}

std::string manifest(const matrix::Cell& c, const std::vector<SourceFile>& sources, const std::string& unhashed,
                     const std::vector<ContextFile>& context, const std::string& lock, const std::string& kb_version,
                     const std::string& identity) {
  std::set<std::string> src;
  for (auto& s : sources) src.insert("source " + s.label + " " + sha256_digest(s.bytes) + "\n");
  std::string m = "imgtool-inputs 1\nkb-version " + kb_version + "\n";
  m += "base " + c.base_image + " " + (c.base_digest.empty() ? "tag-only" : c.base_digest) + "\n";
  m += "pip " + c.pip_requirement + " " + (c.wheelhouse.empty() ? "index " + c.pip_index_url : "wheelhouse") + "\n";
  for (auto& s : src) m += s;
  m += "dockerfile " + sha256_digest(unhashed) + "\n";
  m += "identity " + sha256_digest(identity) + "\n";
  for (auto& f : context) m += "context " + f.dest + " " + f.sha256 + "\n";
  if (!lock.empty()) m += "lock " + std::string(kWheelLockFile) + " " + sha256_digest(lock) + "\n";
  return m;
}

fs::path templates_dir(const GenerateOptions& opt) {
  return opt.templates_dir.empty() ? fs::path(data_dir()) / "dockerfiles" : opt.templates_dir;
}

void check_out_dir(const fs::path& out) {
  if (!fs::exists(out)) return;
  if (!fs::is_directory(out)) throw InputError("--out " + out.string() + ": exists and is not a folder");
  if (fs::is_empty(out) || fs::exists(out / kMarker)) return;
  throw InputError("--out " + out.string() +
                   ": folder exists, is not empty and was not made by imgtool generate; "
                   "choose a new or empty folder (it is replaced as a whole)");
}

void check_cells(const std::vector<matrix::Cell>& cells) {
  if (cells.empty()) throw InputError("no cells to generate (the matrix kept none)");
  std::set<std::string> tags;
  for (auto& c : cells)
    if (!tags.insert(c.tag).second) throw InputError("two cells have the same tag '" + c.tag + "'");
}

GeneratedCell write_cell(const RenderedCell& r, const fs::path& stage, const fs::path& final_out) {
  fs::path dir = stage / r.cell.tag;
  fs::create_directories(dir);
  write_file_atomic(dir / "Dockerfile", r.dockerfile);
  write_file_atomic(dir / "cell.json", r.cell_json);
  write_file_atomic(dir / "inputs.txt", r.inputs_manifest);
  write_file_atomic(dir / "identity.json", r.identity_json);
  if (!r.wheel_lock.empty()) write_file_atomic(dir / kWheelLockFile, r.wheel_lock);
  size_t linked = place_context_files(r.context, dir);
  return {r.cell.tag, final_out / r.cell.tag, r.inputs_hash, r.context.size(), linked, r.cell.warnings, r.file};
}

}  // namespace

std::string identity_json(const std::map<std::string, std::string>& labels) {
  matrix::LabelClaims l = matrix::read_label_claims(labels);
  nlohmann::ordered_json j = {{"tag", l.tag}, {"kb_version", l.kb_version}, {"claims", l.claims()}};
  return j.dump(2) + "\n";
}

RenderedCell render_cell(const matrix::Cell& cell, const TemplateDir& templates, const std::string& kb_version,
                         const std::string& kb_released) {
  Values v = cell_values(cell, kb_version, kb_released);
  std::vector<SourceFile> sources{templates.read(kLabelsFile)};
  CellFile file{.cell = cell, .kb_version = kb_version};
  v["labels"] = render_labels(sources[0], v, &file.labels);
  std::string unhashed = templates.render(cell.template_name, v, &sources);
  lint_or_throw(sources, unhashed, cell.tag);
  RenderedCell r{cell, "", "", "", {}, {}, "", identity_json(file.labels)};
  if (!cell.wheelhouse.empty()) {
    r.context = wheelhouse_files(cell);
    r.wheel_lock = wheel_lock(r.context, cell);
  }
  // Hashed without the engine's base pin (Cell::base_id, base_from): the same cell on an engine that
  // lacks the base has the same inputs; the builder compares the pin itself (io.imgtool.base-id).
  matrix::Cell plain = cell;
  plain.base_id.clear(), plain.base_from.clear();
  std::string hashed = unhashed;
  if (!cell.base_id.empty() || !cell.base_from.empty()) {
    Values pv = cell_values(plain, kb_version, kb_released);
    pv["labels"] = render_labels(sources[0], pv, nullptr);
    hashed = templates.render(plain.template_name, pv);
  }
  r.inputs_manifest = manifest(plain, sources, hashed, r.context, r.wheel_lock, kb_version, r.identity_json);
  r.inputs_hash = file.inputs_hash = sha256_digest(r.inputs_manifest);
  file.build = shared_stage(unhashed);  // the first stage: the hash line goes in the last
  // It copies the context's wheels and installs what the lock names: the same text over other wheels
  // (the 3.x cells of two CUDA lines from their own wheelhouses) or another lock (two Paddle versions
  // from one wheelhouse) is another stage, built and removed on its own.
  if (!file.build.stage_key.empty() && !r.context.empty()) {
    std::string keyed = file.build.stage_key;
    for (const auto& f : r.context) keyed += "\n" + f.dest + " " + f.sha256;
    keyed += "\nlock " + sha256_digest(r.wheel_lock);  // what it installs of them: one cell's lock
    file.build.stage_key = sha256_hex(keyed).substr(0, 12);
  }
  std::string key = group_key(file.build, cell);
  v["labels"] = labels_before_hash(v["labels"]);
  v["inputs_hash_label"] = inputs_hash_label(r.inputs_hash, key);
  file.labels[labels::kInputsHash] = r.inputs_hash;
  file.labels[labels::kStageKey] = key;
  r.dockerfile = templates.render(cell.template_name, v);
  r.cell_json = nlohmann::json(file).dump(2) + "\n";
  r.file = std::move(file);
  return r;
}

namespace {

// The staging folder beside out_dir, made before any cell is rendered: a path that cannot
// be had (core/fs.h: no name, /proc, read-only, no permission) is refused naming --out.
std::unique_ptr<StagingDir> stage_for(const fs::path& out_dir) {
  try {
    return std::make_unique<StagingDir>(out_dir);
  } catch (const InputError& e) {
    throw InputError(std::string("--out ") + e.what());
  }
}

// Writes the rendered cells into out_dir through the staging folder (all or nothing).
std::vector<GeneratedCell> write_all(const std::vector<RenderedCell>& rendered, StagingDir& stage,
                                     const GenerateOptions& opt) {
  std::vector<GeneratedCell> out;
  for (auto& r : rendered) out.push_back(write_cell(r, stage.path(), opt.out_dir));
  write_file_atomic(stage.path() / kMarker, "made by imgtool generate; replaced as a whole on the next run\n");
  stage.commit();
  return out;
}

}  // namespace

std::vector<GeneratedCell> generate(const std::vector<matrix::Cell>& cells, const GenerateOptions& opt) {
  check_cells(cells);
  check_out_dir(opt.out_dir);
  auto stage = stage_for(opt.out_dir);
  TemplateDir templates(templates_dir(opt));
  std::vector<RenderedCell> rendered;  // render all first: a bad cell fails before any write
  for (auto& c : cells) rendered.push_back(render_cell(c, templates, opt.kb_version, opt.kb_released));
  return write_all(rendered, *stage, opt);
}

GenerateOutcome generate_each(const std::vector<matrix::Cell>& cells, const GenerateOptions& opt) {
  check_cells(cells);
  check_out_dir(opt.out_dir);
  auto stage = stage_for(opt.out_dir);
  TemplateDir templates(templates_dir(opt));
  GenerateOutcome out;
  std::vector<RenderedCell> rendered;
  for (auto& c : cells) {
    try {
      rendered.push_back(render_cell(c, templates, opt.kb_version, opt.kb_released));
    } catch (const InputError& e) {
      out.failed.push_back({c, e.what()});
    }
  }
  if (!rendered.empty()) out.generated = write_all(rendered, *stage, opt);
  return out;
}

}  // namespace imgtool::dockerfiles
