#include "nightly/nightly_promote.h"

#include "core/error.h"
#include "image/reference.h"
#include "image/registry_repository.h"
#include "nightly/report.h"
#include "release/promote.h"

namespace imgtool::nightly {

namespace {

// Where the cell goes in the release namespace: its repository below the staging namespace
// ("imgtool-it/paddle" of HOST/staging/imgtool-it/paddle:TAG) under the release one.
image::Reference release_reference(const NightlyCell& c, const image::Reference& from, const NightlyReport& report) {
  image::Reference staging = image::parse_namespace(report.registry), release = image::parse_namespace(report.release);
  auto repo = from.below(staging);
  if (!repo)
    throw InputError(c.tag + ": expected its published reference under " + staging.repository() + ", found " +
                     c.publish.ref);
  return release.under(*repo).with_tag(c.tag);
}

PromotedCell promote_cell(const NightlyCell& c, const NightlyReport& report, const ReportPromoteOptions& o) {
  image::Reference from = image::parse_docker_reference(c.publish.ref);
  image::Reference to = release_reference(c, from, report);
  PromotedCell out{c.tag, from.repository() + "@" + c.publish.digest, to.repository() + ":" + c.tag, false, ""};
  try {
    auto from_reg = image::registry_for(from.host, o.transport);
    auto to_reg = image::registry_for(to.host, o.transport);  // the same client when the hosts are one
    image::RegistryRepository staging(from_reg, from.name), released(to_reg, to.name);
    auto r = release::promote(staging, &released,
                              {.digest = c.publish.digest,
                               .tag = c.tag,
                               .public_key = o.public_key,
                               .sign_key = o.sign_key,
                               .policy = o.policy,
                               .kb = o.kb});
    out.ok = true;
    out.line = r.evidence.empty() ? "promoted" : "promoted; smoke: " + r.evidence;
  } catch (const std::runtime_error& e) {  // Error, CheckFailed (a refusal), InputError: this cell's, not the run's
    out.line = e.what();
  }
  return out;
}

}  // namespace

std::vector<PromotedCell> promote_report(const ReportPromoteOptions& o) {
  if (!o.public_key || !o.sign_key || !o.kb) throw InputError("nightly promote: expected --sign-key KEY, found none");
  NightlyReport report = read_report(o.from_report);
  if (report.release.empty())
    throw InputError(o.from_report.string() +
                     ": expected the report of a staged nightly (--stage-repository), found one "
                     "that published straight to " +
                     report.registry);
  std::vector<PromotedCell> out;
  for (const auto& c : report.cells)
    if (c.publish.ok() && !c.publish.digest.empty()) out.push_back(promote_cell(c, report, o));
  return out;
}

}  // namespace imgtool::nightly
