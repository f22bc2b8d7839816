#include "emit/cell_digests.h"

#include <map>

#include "core/error.h"
#include "core/hash.h"
#include "image/transport.h"
#include "nightly/nightly_steps.h"
#include "nightly/report.h"

namespace imgtool::emit {
namespace {

std::map<std::string, std::string> report_digests(const std::filesystem::path& dir) {
  std::map<std::string, std::string> d;
  if (dir.empty()) return d;
  for (auto& c : nightly::read_report(dir).cells)
    if (c.publish.ok() && is_sha256_digest(c.publish.digest)) d[c.tag] = c.publish.digest;
  return d;
}

}  // namespace

std::vector<CellImage> with_digests(const std::vector<matrix::Cell>& cells, const DigestSources& src) {
  auto known = report_digests(src.from_report);
  auto target = nightly::parse_registry(src.registry);
  std::shared_ptr<image::Registry> reg;
  std::vector<CellImage> out;
  for (auto& c : cells) {
    std::string digest = known.count(c.tag) ? known[c.tag] : "";
    if (digest.empty() && src.ask_registry) {
      if (!reg) reg = image::registry_for(target.host, src.transport);
      try {
        digest = reg->get_manifest(nightly::cell_reference(target, c).name, c.tag).digest();
      } catch (const std::exception& e) {
        throw InputError(
            "plan --emit k8s: cell '" + c.tag + "' has no digest: not published in " +
            (src.from_report.empty() ? std::string("a report (--from-report)") : src.from_report.string()) + " and " +
            nightly::cell_reference(target, c).within_transport() + " cannot be read (" + e.what() + ")");
      }
    }
    if (digest.empty())
      throw InputError("plan --emit k8s: cell '" + c.tag + "' has no digest: expected it published in " +
                       (src.from_report.empty() ? std::string("--from-report DIR") : src.from_report.string()));
    out.push_back({c, digest});
  }
  return out;
}

}  // namespace imgtool::emit
