#include "emit/plan_emit.h"

#include <algorithm>

#include "builder/cell_source.h"
#include "builder/generated_cell.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/paths.h"
#include "dockerfiles/generate.h"
#include "emit/bake.h"
#include "emit/cell_digests.h"
#include "emit/ci_matrix.h"
#include "emit/k8s_jobs.h"
#include "matrix/matrix.h"
#include "nightly/nightly_steps.h"
#include "run/profile.h"

namespace imgtool::emit {
namespace {

namespace fs = std::filesystem;

matrix::KnowledgeBase load_kb(const PlanEmitOptions& o) {
  return o.kb_dir.empty() ? matrix::KnowledgeBase::load_default() : matrix::KnowledgeBase::load(o.kb_dir);
}

std::vector<std::string> tags_of(const std::vector<matrix::Cell>& cells) {
  std::vector<std::string> t;
  for (auto& c : cells) t.push_back(c.tag);
  return t;
}

using Files = std::vector<EmittedFile>;

Files ci_files(const PlanEmitOptions& o, PlanEmitResult&) {
  auto kb = load_kb(o);
  auto tags = tags_of(matrix::plan_matrix(o.input, kb).kept);
  CiOptions ci{.matrix = o.input,
               .shards = o.shards,
               .registry = o.registry,
               .runs_on = o.runs_on,
               .no_gpu_host = o.no_gpu_host};
  if (o.emit == Emit::github) return {{"imgtool-nightly.yml", emit_github(tags, ci)}};
  return {{"imgtool-nightly.gitlab-ci.yml", emit_gitlab(tags, ci)}};
}

// Generated cells: M itself when it is a generated folder, else M planned and generated into DIR/cells.
std::vector<builder::GeneratedCell> bake_cells(const PlanEmitOptions& o, PlanEmitResult& r) {
  if (fs::is_directory(o.input)) return builder::load_generated_folder(o.input);
  auto kb = load_kb(o);
  auto plan = matrix::plan_matrix(o.input, kb);
  if (plan.kept.empty())
    throw InputError("plan --emit bake: expected at least one kept cell in " + o.input + ", found none");
  // As build and nightly generate, less their base pins (builder/base_pin.h: plan asks no engine, and
  // BuildKit, bake's builder, cannot build FROM an image ID): a base stays as the matrix names it.
  builder::CellSource src = builder::generate_cells(plan, o.out / "cells");
  std::vector<builder::GeneratedCell> cells;
  for (auto& c : src.cells) {
    if (c.generate_error.empty())
      cells.push_back(std::move(c));
    else
      r.notes.push_back("left out " + c.cell.tag + ": " + c.generate_error.substr(c.generate_error.find(": ") + 2));
  }
  r.written.push_back(o.out / "cells");
  return cells;
}

Files bake_out(const PlanEmitOptions& o, PlanEmitResult& r) {
  if (!o.registry.empty()) nightly::parse_registry(o.registry);  // refuse a bad one before generating
  auto files = bake_files(bake_cells(o, r), {.out_dir = fs::absolute(o.out), .registry = o.registry});
  Files out;
  for (auto& f : files) out.push_back({f.name, f.json});
  out.push_back({"bake.sh", bake_script(files), 0755});
  return out;
}

Files k8s_out(const PlanEmitOptions& o, PlanEmitResult& r) {
  if (o.registry.empty())
    throw InputError(
        "plan --emit k8s: expected --registry HOST[:PORT]/NAMESPACE (the Jobs pull by digest from it), found none");
  auto profile = runconf::load_profile(
      {.profiles = o.profiles.empty() ? std::vector<std::string>{"base"} : o.profiles, .sets = o.sets});
  auto kb = load_kb(o);
  std::vector<matrix::Cell> gpu;
  for (auto& c : matrix::plan_matrix(o.input, kb).kept) {
    if (c.variant == "gpu")
      gpu.push_back(c);
    else
      r.notes.push_back("no Job for " + c.tag + ": a " + c.variant + " image (the GPU smoke is for gpu cells)");
  }
  if (gpu.empty()) throw InputError("plan --emit k8s: expected at least one gpu cell in " + o.input + ", found none");
  auto cells = with_digests(gpu, {.from_report = o.from_report,
                                  .registry = o.registry,
                                  .ask_registry = o.resolve_digests,
                                  .transport = o.transport});
  std::string probe = data_dir() + "/smoke/probe/probe.py";
  return smoke_jobs(cells,
                    {.registry = o.registry,
                     .profile = profile,
                     .gpu_model = o.gpu_model,
                     .probe_text = read_file(probe),
                     .nonce = o.nonce.empty() ? new_nonce() : o.nonce},
                    kb);
}

}  // namespace

Emit parse_emit(const std::string& s) {
  static const std::vector<std::pair<const char*, Emit>> kNames = {
      {"github", Emit::github}, {"gitlab", Emit::gitlab}, {"bake", Emit::bake}, {"k8s", Emit::k8s}};
  for (auto& [n, e] : kNames)
    if (s == n) return e;
  throw InputError("--emit: expected github, gitlab, bake or k8s, found '" + s + "'");
}

PlanEmitResult emit_plan(const PlanEmitOptions& o) {
  if (o.out.empty()) throw InputError("plan --emit: expected --out DIR for the files, found none");
  PlanEmitResult r;
  Files files;
  switch (o.emit) {
    case Emit::github:
    case Emit::gitlab:
      files = ci_files(o, r);
      break;
    case Emit::bake:
      files = bake_out(o, r);
      break;
    case Emit::k8s:
      files = k8s_out(o, r);
      break;
  }
  fs::create_directories(o.out);
  for (auto& f : files) {
    write_file_atomic(o.out / f.name, f.text, f.mode);
    r.written.push_back(o.out / f.name);
  }
  return r;
}

}  // namespace imgtool::emit
