#include "builder/build_driver.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iomanip>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "builder/build_progress.h"
#include "builder/failure_kind.h"
#include "builder/normalize_built.h"
#include "builder/stage_plan.h"
#include "builder/task_pool.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/strings.h"
#include "dockerfiles/cell_values.h"
#include "matrix/labels.h"

namespace imgtool::builder {
namespace {

using Clock = std::chrono::steady_clock;
using engine::BuildRequest;
using engine::BuildResult;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Everything one run shares between its worker threads.
struct Run {
  const std::vector<GeneratedCell>& cells;
  const BuildOptions& opt;
  engine::Engine& docker;
  StateStore& store;
  std::vector<CellBuild>& results;
  std::atomic<int> docker_builds{0};
  std::mutex event_mu;
  std::mutex stages_mu;
  std::vector<std::string> shared_stages;     // stage images this run tagged (removed at its end)
  std::unique_ptr<ProgressWatcher> progress;  // step lines from the growing logs; null without on_event

  void event(const std::string& line) {
    if (!opt.on_event) return;
    std::lock_guard lock(event_mu);
    opt.on_event(line);
  }
};

// A build's log watched for step progress while it runs (build_progress.h).
class Watched {
 public:
  Watched(Run& run, std::string name, const fs::path& log) : run_(run), name_(std::move(name)) {
    if (run_.progress) run_.progress->watch(name_, log);
  }
  ~Watched() {
    if (run_.progress) run_.progress->forget(name_);
  }
  Watched(const Watched&) = delete;
  Watched& operator=(const Watched&) = delete;

 private:
  Run& run_;
  std::string name_;
};

void append_log(const fs::path& log, const std::string& line) {
  std::ofstream out(log, std::ios::app);
  out << "[imgtool] " << line << '\n';
}

// One `docker build` with retries on transient failures. `attempts` counts invocations.
BuildResult build_with_retry(Run& run, const BuildRequest& req, const std::string& what, int& attempts) {
  auto backoff = run.opt.retry_backoff;
  for (;;) {
    ++attempts;
    ++run.docker_builds;
    append_log(req.log_path, "docker build " + what + " (attempt " + std::to_string(attempts) + ")");
    BuildResult r = run.docker.build(req);
    if (r.ok() || r.run.timed_out) return r;
    FailureKind k = classify_failure(r.run.out + r.run.err);
    if (!k.transient || attempts >= run.opt.max_attempts) return r;
    std::string msg =
        what + ": transient failure (\"" + k.marker + "\"), retrying in " + std::to_string(backoff.count()) + " ms";
    append_log(req.log_path, msg);
    run.event(msg);
    std::this_thread::sleep_for(backoff);
    backoff *= 2;
  }
}

// Last non-empty line of a failed build's output: usually the RUN step's error ("The command '…'
// returned a non-zero code: 4"). A long one keeps its start and its end, where the exit code is:
// a RUN of several commands is a long line.
std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos && line.rfind("DEPRECATED", 0) != 0 &&
        line.find("BuildKit is currently disabled") == std::string::npos &&
        line.find("environment-variable.") == std::string::npos)
      last = line;
  return last.size() > 240 ? last.substr(0, 120) + " … " + last.substr(last.size() - 110) : last;
}

std::string failure_reason(const BuildResult& r, const BuildOptions& opt, int attempts) {
  if (r.run.timed_out)
    return "timed out after " + std::to_string(opt.timeout.count()) + " s; fix: raise --timeout or check the log";
  FailureKind k = classify_failure(r.run.out + r.run.err);
  std::string why = strings::printable(last_line(r.run.err.empty() ? r.run.out : r.run.err));  // the build's own text
  if (k.transient) return "transient failure persisted after " + std::to_string(attempts) + " attempts: " + why;
  return "exit " + std::to_string(r.run.exit_code) + ": " + why;
}

// A mark no other build carries: 64 random bits, hex.
std::string fresh_mark() {
  static std::mutex mu;
  static std::mt19937_64 gen{std::random_device{}()};
  std::lock_guard lock(mu);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(gen()));
  return buf;
}

BuildRequest request_for(const GeneratedCell& g, const BuildOptions& opt) {
  BuildRequest req;
  req.context = g.dir;
  req.dockerfile = g.dockerfile();
  req.image = local_image(g.cell, opt.image_prefix);
  req.labels = {{kInputsHashLabel, g.inputs_hash}, {labels::kTag, g.cell.tag}, {labels::kStageKey, base_key(g)}};
  if (!g.kb_version.empty()) req.labels[labels::kKbVersion] = g.kb_version;
  // The classic builder turns each --label into one more step (a container created and committed:
  // ~2 s on a GB image), so a label the Dockerfile already sets (cell.json says which) is not
  // passed again; the Dockerfile itself is not read.
  std::erase_if(req.labels, [&](const auto& kv) {
    auto it = g.labels.find(kv.first);
    return it != g.labels.end() && it->second == kv.second;
  });
  req.build_args[labels::kBuildStageArg] = fresh_mark();
  req.no_cache = opt.no_cache;
  req.timeout = opt.timeout;
  req.log_path = opt.log_dir / (g.cell.tag + ".log");
  return req;
}

// Removes one image (by name or ID; `shown` names it in the event). The engine refusing (a container
// uses it, another image is built FROM it) or not answering leaves it, said in an event: the cell's
// result stands, and `imgtool prune` takes what is left.
void remove_one(Run& run, const std::string& ref, const std::string& shown, const std::string& what) {
  try {
    if (run.docker.remove(ref)) run.event("removed " + shown + ", " + what);
  } catch (const Error& e) {
    run.event("kept " + shown + ", " + what + ": " + e.what());
  }
}

// remove_one for each untagged image `f` lists, all but `keep`.
void remove_listed(Run& run, const engine::ImageFilter& f, const std::string& keep, const std::string& what) {
  std::vector<engine::ImageInfo> listed;
  try {
    listed = run.docker.list_images(f);
  } catch (const Error& e) {
    run.event("kept " + what + ": " + e.what());
  }
  for (const auto& img : listed)
    if (img.id != keep) remove_one(run, img.id, img.id.substr(0, 19), what);
}

// The untagged images this build's first stage left (its mark, labels::kBuildStage), once the
// cell's build is over, made or failed (its log stays). A named one (a shared stage) is not listed.
void remove_build_stage(Run& run, const std::string& tag, const BuildRequest& req) {
  auto mark = req.build_args.find(labels::kBuildStageArg);
  if (run.opt.keep_stages || mark == req.build_args.end()) return;
  remove_listed(run, {.labels = {std::string(labels::kBuildStage) + "=" + mark->second}, .dangling = true}, "",
                "the build stage of " + tag + " (--keep-stages keeps it)");
}

// The shared stages this run tagged, once every cell is done (unless keep_stages).
void remove_shared_stages(Run& run) {
  if (run.opt.keep_stages) return;
  for (const auto& name : run.shared_stages) remove_one(run, name, name, "the shared stage (--keep-stages keeps it)");
}

// The cell's clock (the Dockerfile's io.imgtool.source-date-epoch label); 0 when it has none.
int64_t epoch_of(const GeneratedCell& g) {
  auto it = g.labels.find(labels::kSourceDateEpoch);
  return it == g.labels.end() ? 0 : labels::source_date_epoch(it->second);
}

// Up to date = store and image label agree on the cell's inputs hash.
bool check_up_to_date(Run& run, size_t i) {
  const GeneratedCell& g = run.cells[i];
  CellBuild& out = run.results[i];
  auto rec = run.store.last_build(g.cell.tag);
  if (run.opt.force || !rec || rec->inputs_hash != g.inputs_hash) return false;
  auto img = run.docker.inspect(out.image);
  if (!img) return false;
  auto it = img->labels.find(kInputsHashLabel);
  if (it == img->labels.end() || it->second != g.inputs_hash) return false;
  // The base this engine holds (base_pin.h), when it holds it: an image built on another is not up to
  // date (the base was made again, or pulled anew). Without the base here, the inputs decide.
  if (!g.cell.base_id.empty()) {
    auto base = img->labels.find(labels::kBaseId);
    if (base == img->labels.end() || base->second != g.cell.base_id) return false;
  }
  // Likewise the digest a registry gave the base's tag (base_pin.h), for a base this engine lacks:
  // a tag that moved since the image was built rebuilds it.
  if (std::string d = dockerfiles::base_ref_digest(g.cell); !d.empty()) {
    auto base = img->labels.find(labels::kBaseDigest);
    if (base == img->labels.end() || base->second != d) return false;
  }
  // Asked for a normalized image: one the build made as it was (its clock, not the cell's) is not it.
  if (run.opt.normalize && img->created != strings::utc_rfc3339(epoch_of(g))) return false;
  out.status = CellStatus::up_to_date;
  out.image_id = img->id;
  return true;
}

// A cell that ends without a result (its task threw: engine gone, disk full, a
// bug) is FAILED with the reason; the other cells go on.
void fail_unexpectedly(Run& run, size_t i, const std::string& why) {
  CellBuild& out = run.results[i];
  out.status = CellStatus::failed;
  out.error = "unexpected error: " + why + " (log: " + out.log + ")";
  try {
    run.store.forget_build(run.cells[i].cell.tag);
  } catch (const std::exception&) {
    // the store may be what failed; the cell is reported FAILED either way
  }
  run.event("FAILED " + run.cells[i].cell.tag + ": " + out.error);
}

// Runs one worker task; an exception fails `cells` (those without a result yet), never std::terminate.
template <typename F>
void guarded(Run& run, const std::vector<size_t>& cells, F&& task) {
  try {
    task();
  } catch (const std::exception& e) {
    for (size_t i : cells)
      if (run.results[i].status == CellStatus::failed && run.results[i].error.empty())
        fail_unexpectedly(run, i, e.what());
  } catch (...) {
    for (size_t i : cells)
      if (run.results[i].status == CellStatus::failed && run.results[i].error.empty())
        fail_unexpectedly(run, i, "unknown exception");
  }
}

// The image this cell's last good build made (the store's record), once a new build replaced it:
// removed when it is an imgtool cell image no name holds any more (the classic builder leaves it
// dangling: 9.6 GB in one run of the suite). One another image is built FROM, or a container uses,
// stays (the engine refuses; the event says so). Asks the engine nothing when there was no earlier build.
void remove_replaced(Run& run, const std::string& tag, const std::string& before_id, const std::string& now_id) {
  if (before_id.empty() || before_id == now_id) return;
  auto old = run.docker.inspect(before_id);
  if (!old || !old->repo_tags.empty() || !old->labels.count(labels::kTag)) return;  // gone, named, or not ours
  remove_one(run, before_id, before_id.substr(0, 19), "the image " + tag + " replaced (no name held it)");
}

// The same cell with the same inputs built by another state folder (the demo's and the tests' GPU
// cell: each state has its own record, so each builds once): the image the name held before is
// left without a name. Found after the build by its labels (this tag, these inputs, no name).
void remove_same_inputs(Run& run, const GeneratedCell& g, const std::string& now_id) {
  remove_listed(
      run,
      {.labels = {std::string(labels::kTag) + "=" + g.cell.tag, std::string(labels::kInputsHash) + "=" + g.inputs_hash},
       .dangling = true},
      now_id, "the image " + g.cell.tag + " had before (same inputs)");
}

// BuildOptions::normalize: the image normalized and loaded back under its name (normalize_built.h);
// the image the build made goes. False, with out.error, when it cannot be done: the cell fails and
// the caller removes what the build made (no name is left on an image that is not what was asked for).
bool normalize_cell(Run& run, const GeneratedCell& g, const std::string& image, CellBuild& out) {
  out.status = CellStatus::failed;
  int64_t epoch = epoch_of(g);
  if (epoch <= 0) {
    out.error = std::string("normalize: the cell sets no ") + labels::kSourceDateEpoch + " label (regenerate it)";
    return false;
  }
  auto t0 = Clock::now();
  try {
    NormalizedBuild n =
        normalize_built(run.docker, image, epoch, run.opt.normalize_rules, run.opt.log_dir.parent_path());
    out.built_id = out.image_id;
    out.image_id = n.image_id;
    run.event("normalized " + g.cell.tag + " in " + std::to_string(static_cast<int>(since(t0))) +
              " s: " + n.image_id.substr(0, 19) + " (" + std::to_string(n.mtimes_clamped) + " mtime(s) clamped, " +
              std::to_string(n.dropped) + " build record(s) dropped, " + std::to_string(n.pyc_rewritten) +
              " .pyc rewritten, " + std::to_string(n.cached) + " of " + std::to_string(n.layers) +
              " layer(s) found normalized in the layer cache)");
  } catch (const std::exception& e) {
    out.error = std::string("normalize: ") + e.what();
    return false;
  }
  out.status = CellStatus::built;
  out.seconds = since(t0) + out.seconds;
  if (out.built_id != out.image_id)
    remove_one(run, out.built_id, out.built_id.substr(0, 19),
               "the image the build made (normalized into " + out.image_id.substr(0, 19) + ")");
  return true;
}

void build_cell_unguarded(Run& run, size_t i) {
  const GeneratedCell& g = run.cells[i];
  CellBuild& out = run.results[i];
  auto t0 = Clock::now();
  BuildRequest req = request_for(g, run.opt);
  auto last = run.store.last_build(g.cell.tag);
  std::string before_id = last ? last->image_id : "";
  write_file_atomic(req.log_path, "");  // one log per cell: the latest build's
  run.event("build " + g.cell.tag + " → " + req.image);
  BuildResult r = [&] {
    Watched w(run, g.cell.tag, req.log_path);
    return build_with_retry(run, req, g.cell.tag, out.attempts);
  }();
  out.seconds = since(t0);
  if (!r.ok()) {
    out.status = CellStatus::failed;
    out.error = failure_reason(r, run.opt, out.attempts) + " (log: " + out.log + ")";
    run.store.forget_build(g.cell.tag);
    run.event("FAILED " + g.cell.tag + ": " + out.error);
    remove_build_stage(run, g.cell.tag, req);  // a first stage that built before the failing step
    return;
  }
  out.status = CellStatus::built;
  out.image_id = r.image_id;
  run.event("built " + g.cell.tag + " in " + std::to_string(static_cast<int>(out.seconds)) + " s");
  if (run.opt.normalize && !normalize_cell(run, g, req.image, out)) {
    run.store.forget_build(g.cell.tag);
    remove_one(run, out.image_id, out.image_id.substr(0, 19), "the image the build made (not normalized)");
    run.event("FAILED " + g.cell.tag + ": " + out.error);
    remove_build_stage(run, g.cell.tag, req);
    return;
  }
  run.store.record_build({g.cell.tag, g.inputs_hash, req.image, out.image_id, out.seconds, 0});
  remove_replaced(run, g.cell.tag, before_id, out.image_id);
  remove_same_inputs(run, g, out.image_id);
  remove_build_stage(run, g.cell.tag, req);
}

void build_cell(Run& run, size_t i) {
  guarded(run, {i}, [&] { build_cell_unguarded(run, i); });
}

// Builds the group's shared first stage alone. A failure here is not final:
// each cell then builds (and reports) on its own.
void build_stage(Run& run, const StageGroup& grp) {
  const GeneratedCell& leader = run.cells[grp.cells.front()];
  BuildRequest req = request_for(leader, run.opt);
  req.image = grp.stage_image();
  req.target = grp.stage;
  req.labels = {{labels::kStageOf, leader.cell.tag}, {labels::kStageKey, grp.key}};
  req.log_path = run.opt.log_dir / ("stage-" + grp.key + ".log");
  write_file_atomic(req.log_path, "");
  run.event("stage " + req.image + " (shared by " + std::to_string(grp.cells.size()) + " cells)");
  int attempts = 0;
  std::string why;
  try {
    Watched w(run, "stage " + grp.key, req.log_path);
    BuildResult r = build_with_retry(run, req, "stage " + grp.key, attempts);
    if (!r.ok()) {
      why = "failed";
    } else {
      std::lock_guard lock(run.stages_mu);
      run.shared_stages.push_back(req.image);
    }
  } catch (const std::exception& e) {
    why = std::string("failed: ") + e.what();
  }
  if (!why.empty())
    run.event("stage " + grp.key + " " + why + "; cells build on their own (log: " + req.log_path.string() + ")");
}

// Shared part first, then the rest of the group in parallel.
void run_group_unguarded(Run& run, TaskPool& pool, const StageGroup& grp) {
  std::vector<size_t> todo;
  for (size_t i : grp.cells)
    if (!check_up_to_date(run, i)) todo.push_back(i);
  for (size_t i : grp.cells)
    if (run.results[i].status == CellStatus::up_to_date) run.event("up to date " + run.cells[i].cell.tag);
  if (todo.empty()) return;
  if (todo.size() > 1 && !grp.stage.empty()) {
    build_stage(run, grp);
  } else if (todo.size() > 1) {
    build_cell(run, todo.front());
    todo.erase(todo.begin());
  }
  for (size_t i : todo) pool.submit([&run, i] { build_cell(run, i); });
}

void run_group(Run& run, TaskPool& pool, const StageGroup& grp) {
  guarded(run, grp.cells, [&] { run_group_unguarded(run, pool, grp); });
}

}  // namespace

std::string to_string(CellStatus s) {
  switch (s) {
    case CellStatus::built:
      return "built";
    case CellStatus::up_to_date:
      return "up-to-date";
    case CellStatus::failed:
      return "FAILED";
  }
  return "?";
}

bool BuildReport::ok() const { return count(CellStatus::failed) == 0; }

int BuildReport::count(CellStatus s) const {
  return static_cast<int>(std::count_if(cells.begin(), cells.end(), [s](auto& c) { return c.status == s; }));
}

std::string local_image(const matrix::Cell& c, const std::string& prefix) {
  return prefix + c.repository + ":" + c.tag;
}

BuildReport build_cells(const std::vector<GeneratedCell>& cells, const BuildOptions& opt, engine::Engine& docker,
                        StateStore& store) {
  auto t0 = Clock::now();
  fs::create_directories(opt.log_dir);
  BuildReport rep;
  rep.builder = docker.builder_kind();
  rep.cells.resize(cells.size());
  auto groups = group_by_base(cells);
  for (auto& grp : groups)
    for (size_t i : grp.cells) {
      auto& c = rep.cells[i];
      c.tag = cells[i].cell.tag;
      c.image = local_image(cells[i].cell, opt.image_prefix);
      c.inputs_hash = cells[i].inputs_hash;
      c.log = (opt.log_dir / (c.tag + ".log")).string();
      c.stage_group = grp.key;
    }
  for (size_t i = 0; i < cells.size(); ++i)
    if (!cells[i].generate_error.empty()) {
      rep.cells[i] = {.tag = cells[i].cell.tag,
                      .image = local_image(cells[i].cell, opt.image_prefix),
                      .status = CellStatus::failed,
                      .error = cells[i].generate_error};
      if (opt.on_event) opt.on_event("FAILED " + cells[i].cell.tag + ": " + cells[i].generate_error);
    }
  Run run{cells, opt, docker, store, rep.cells};
  if (opt.on_progress || opt.on_event)
    run.progress = std::make_unique<ProgressWatcher>([&run](const ProgressEvent& e) {
      if (run.opt.on_progress)
        run.opt.on_progress(e);
      else if (!e.done)
        run.event(to_line(e));
    });
  {
    TaskPool pool(opt.jobs);
    for (auto& grp : groups) pool.submit([&run, &pool, grp] { run_group(run, pool, grp); });
    pool.wait();
  }
  remove_shared_stages(run);
  run.progress.reset();  // no step line after the run
  rep.docker_builds = run.docker_builds;
  rep.seconds = since(t0);
  return rep;
}

std::string summary_table(const BuildReport& r) {
  size_t w = 4;
  for (auto& c : r.cells) w = std::max(w, c.tag.size());
  std::ostringstream s;
  s << std::left << std::setw(static_cast<int>(w)) << "CELL"
    << "  " << std::setw(10) << "STATUS"
    << "  TRIES  SECONDS  DETAIL\n";
  for (auto& c : r.cells) {
    std::string detail = c.status == CellStatus::failed ? c.error : c.image_id.substr(0, 19);
    s << std::setw(static_cast<int>(w)) << c.tag << "  " << std::setw(10) << to_string(c.status) << "  " << std::setw(5)
      << c.attempts << "  " << std::setw(7) << std::fixed << std::setprecision(1) << c.seconds << "  " << detail
      << '\n';
  }
  s << r.cells.size() << " cells: " << r.count(CellStatus::built) << " built, " << r.count(CellStatus::up_to_date)
    << " up to date, " << r.count(CellStatus::failed) << " failed; " << r.docker_builds
    << " docker build invocation(s) (" << r.builder << " builder)";
  if (r.docker_builds == 0) s << " — nothing changed, nothing built";
  s << '\n';
  return s.str();
}

nlohmann::json to_json(const BuildReport& r) {
  nlohmann::json cells = nlohmann::json::array();
  for (auto& c : r.cells)
    cells.push_back({{"tag", c.tag},
                     {"image", c.image},
                     {"image_id", c.image_id},
                     {"inputs_hash", c.inputs_hash},
                     {"status", to_string(c.status)},
                     {"attempts", c.attempts},
                     {"seconds", c.seconds},
                     {"log", c.log},
                     {"error", c.error},
                     {"stage_group", c.stage_group}});
  return {{"ok", r.ok()},
          {"cells", cells},
          {"docker_builds", r.docker_builds},
          {"builder", r.builder},
          {"seconds", r.seconds}};
}

}  // namespace imgtool::builder
