#include "smoke/binding.h"

#include <cstdio>

#include "core/gpu_arch.h"
#include "core/json_file.h"
#include "core/version.h"
#include "smoke/evidence.h"

namespace imgtool::smoke {

namespace {

using nlohmann::json;

constexpr std::time_t kSkewS = 300;

const json& doc_at(const json& j, const char* key) { return json_member(j, key); }

std::string doc_str(const json& j, const char* key) {
  const json& v = doc_at(j, key);
  return v.is_string() ? v.get<std::string>() : "";
}

// "11.8.89" -> "11.8" (n = 2), "8.6.0" -> "8" (n = 1); "" when not a version.
std::string version_prefix(const std::string& v, size_t n) {
  auto p = Version::parse(v);
  return p && p->parts.size() >= n ? p->truncated(n) : "";
}

struct Out {
  std::vector<std::string> lines;
  void differ(const std::string& what, const std::string& doc, const std::string& image) {
    lines.push_back(what + ": the document says " + (doc.empty() ? "nothing" : "'" + doc + "'") +
                    ", the image claims '" + image + "'");
  }
};

void check_identity(const json& probe, const BindingFacts& f, Out& o) {
  const json& id = doc_at(probe, "identity");
  const json& doc = doc_at(id, "document");
  if (!doc.is_object()) {
    if (f.require_identity)
      o.lines.push_back("identity: the document carries no /etc/imgtool/identity.json of the image (" +
                        (doc_str(id, "error").empty() ? std::string(id.is_null() ? "not reported" : "missing")
                                                      : doc_str(id, "error")) +
                        "), so nothing ties it to the image '" + f.claims.tag + "'");
    return;
  }
  if (doc_str(doc, "tag") != f.claims.tag) o.differ("identity tag", doc_str(doc, "tag"), f.claims.tag);
  for (const auto& [field, claim] : f.claims.claims()) {
    const json& c = doc_at(doc_at(doc, "claims"), field.c_str());
    if (c.is_string() && c.get<std::string>() != claim) o.differ("identity " + field, c.get<std::string>(), claim);
  }
}

void check_paddle(const json& probe, const BindingFacts& f, Out& o) {
  const json& p = doc_at(probe, "paddle");
  const auto& c = f.claims;
  if (!doc_at(p, "version").is_string()) {
    o.lines.push_back("paddle: the document reports no Paddle (" +
                      (doc_str(p, "status").empty() ? std::string("no section") : doc_str(p, "status")) +
                      "), so it is about no image's Paddle; the image claims paddle " + c.paddle);
    return;
  }
  if (!c.paddle.empty() && doc_str(p, "version") != c.paddle) o.differ("paddle", doc_str(p, "version"), c.paddle);
  bool gpu_build = doc_at(p, "compiled_with_cuda").is_boolean() && doc_at(p, "compiled_with_cuda").get<bool>();
  if (c.variant == "cpu" && gpu_build)
    o.lines.push_back("variant: the document is of a GPU Paddle build (CUDA " + doc_str(p, "cuda") +
                      "), the image is a cpu image");
  if (c.variant == "gpu" && !gpu_build)
    o.lines.push_back("variant: the document is of a CPU-only Paddle build, the image is a gpu image");
  if (!c.python.empty() && version_prefix(doc_str(p, "python"), 2) != version_prefix(c.python, 2))
    o.differ("python", doc_str(p, "python"), c.python);
  if (c.variant != "gpu") return;
  if (!c.cuda.empty() && version_prefix(doc_str(p, "cuda"), 2) != version_prefix(c.cuda, 2))
    o.differ("paddle's CUDA build", doc_str(p, "cuda"), c.cuda);
  if (!c.cudnn.empty() && version_prefix(doc_str(p, "cudnn"), 1) != version_prefix(c.cudnn, 1))
    o.differ("paddle's cuDNN", doc_str(p, "cudnn"), c.cudnn);
}

void check_libraries(const json& probe, const BindingFacts& f, Out& o) {
  if (f.claims.variant != "gpu" || f.claims.cuda.empty()) return;
  std::string cudart = doc_str(doc_at(doc_at(probe, "libraries"), "cudart"), "version");
  if (!cudart.empty() && version_prefix(cudart, 2) != version_prefix(f.claims.cuda, 2))
    o.differ("the loaded cudart", cudart, f.claims.cuda);
}

void check_archs(const json& probe, const BindingFacts& f, Out& o) {
  const json& devices = doc_at(doc_at(probe, "driver"), "devices");
  if (f.claims.cuda_archs.empty() || !devices.is_array()) return;
  for (const auto& d : devices) {
    if (doc_str(d, "name") == kTestDoubleDevice) continue;  // no GPU: nothing runs the image's code on it
    const json& cc = doc_at(d, "cc");
    if (!cc.is_array() || cc.size() != 2 || !cc[0].is_number_integer() || !cc[1].is_number_integer()) continue;
    std::string text = std::to_string(cc[0].get<int>()) + "." + std::to_string(cc[1].get<int>());
    if (std::string gap = kernel_gap(f.claims.cuda_archs, text); !gap.empty())
      o.lines.push_back("archs: device '" + doc_str(d, "name") + "' (compute capability " + text +
                        ") is not served by the image's " + f.claims.cuda_archs + ": " + gap);
  }
}

void check_time(const json& probe, const BindingFacts& f, std::time_t now, Out& o) {
  std::string started = doc_str(doc_at(probe, "probe"), "started");
  std::time_t t = parse_utc(started);
  if (t == 0) {
    o.lines.push_back("time: the document has no start time (probe.started), found '" + started + "'");
    return;
  }
  if (f.created && t + kSkewS < f.created)
    o.lines.push_back("time: the probe started at " + started + ", before the image " + f.image_id +
                      " was created: a document of an earlier run");
  if (t > now + kSkewS) o.lines.push_back("time: the probe started at " + started + ", in the future");
}

}  // namespace

std::time_t parse_utc(const std::string& iso) {
  std::tm tm{};
  char z = 0;
  if (iso.size() < 20 || std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                                     &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &z) != 7)
    return 0;
  if (z != 'Z' && z != '.') return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return timegm(&tm);
}

std::vector<std::string> binding_contradictions(const json& probe, const BindingFacts& f, std::time_t now) {
  Out o;
  if (f.image_id.empty()) {
    o.lines.push_back("image: no image ID to bind the document to (refusing rather than skipping the check)");
    return o.lines;
  }
  if (!probe.is_object()) return {"document: expected the probe's JSON object, found none"};
  check_identity(probe, f, o);
  check_paddle(probe, f, o);
  check_libraries(probe, f, o);
  check_archs(probe, f, o);
  check_time(probe, f, now, o);
  if (!f.nonce.empty() && doc_str(doc_at(probe, "probe"), "nonce") != f.nonce)
    o.lines.push_back("nonce: the document echoes '" + doc_str(doc_at(probe, "probe"), "nonce") +
                      "', the run was given '" + f.nonce + "'");
  return o.lines;
}

}  // namespace imgtool::smoke
