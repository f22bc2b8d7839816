#include "nightly/nightly_reproduce.h"

#include <algorithm>

#include "core/fs.h"
#include "image/normalize.h"
#include "image/reference.h"
#include "reproduce/reproduce.h"

namespace imgtool::nightly {
namespace {

// YYYYMMDD as a day number (any other text: 0).
long day_number(const std::string& yyyymmdd) {
  if (yyyymmdd.size() != 8 || yyyymmdd.find_first_not_of("0123456789") != std::string::npos) return 0;
  int y = std::stoi(yyyymmdd.substr(0, 4)), m = std::stoi(yyyymmdd.substr(4, 2)), d = std::stoi(yyyymmdd.substr(6));
  return y * 372L + m * 31L + d;  // monotonic, not calendar-exact: only where the sample starts
}

ReproduceStep step_of(const reproduce::Reproduction& r) {
  ReproduceStep s{reproduce::to_string(r.outcome), r.why, r.rebuilt_digest, r.seconds};
  if (r.outcome == reproduce::Outcome::differs) s.detail = image::render_difference(r.difference);
  return s;
}

}  // namespace

std::vector<size_t> reproduce_sample(const NightlyReport& report, int count, const std::string& today) {
  std::vector<size_t> published;
  for (size_t i = 0; i < report.cells.size(); ++i)
    if (report.cells[i].publish.ok()) published.push_back(i);
  std::sort(published.begin(), published.end(),
            [&](size_t a, size_t b) { return report.cells[a].tag < report.cells[b].tag; });
  std::vector<size_t> out;
  if (published.empty() || count <= 0) return out;
  size_t start = static_cast<size_t>(day_number(today)) % published.size();
  for (size_t k = 0; k < std::min(published.size(), static_cast<size_t>(count)); ++k)
    out.push_back(published[(start + k) % published.size()]);
  return out;
}

void reproduce_published(NightlyReport& report, const std::vector<builder::GeneratedCell>& cells,
                         const ReproduceSample& s, engine::Engine& docker) {
  std::vector<size_t> sample = reproduce_sample(report, s.count, s.today);
  if (sample.empty()) return;
  std::filesystem::create_directories(s.work_parent);
  PrivateTempDir work("reproduce-", s.work_parent);
  reproduce::ReproduceRequest req{
      .cells = cells,
      .kb_version = report.cells[sample.front()].kb_version,
      .engine = &docker,
      .transport = s.transport,
      .work_dir = work.path(),
      .rules = s.rules.empty() ? image::read_normalize_rules(image::default_normalize_rules()) : s.rules,
      .on_event = s.on_event};
  for (size_t i : sample) {  // tonight's digest, not the tag (which may move meanwhile)
    const PublishStep& p = report.cells[i].publish;
    req.refs.push_back(image::parse_docker_reference(p.ref).with_digest(p.digest).str());
  }
  reproduce::ReproduceReport r = reproduce::reproduce(req);
  for (size_t k = 0; k < sample.size(); ++k) report.cells[sample[k]].reproduce = step_of(r.images[k]);
}

}  // namespace imgtool::nightly
