#include "run/image_facts.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/gpu_arch.h"
#include "core/json_file.h"
#include "core/version.h"
#include "image/config.h"
#include "image/engine_api.h"
#include "image/transport.h"
#include "matrix/label_claims.h"

namespace imgtool::runconf {

ImageFacts ImageFacts::from_labels(const std::string& ref, const std::map<std::string, std::string>& l) {
  matrix::LabelClaims c = matrix::read_label_claims(l);
  return {ref, c.variant, c.paddle, c.python, c.cuda, c.cudnn, c.min_driver, c.tag, c.cuda_archs, ""};
}

namespace {

std::map<std::string, std::string> labels_of(const nlohmann::json& j) {
  std::map<std::string, std::string> out;
  if (!j.is_object()) return out;
  for (auto& [k, v] : j.items())
    if (v.is_string()) out[k] = v.get<std::string>();
  return out;
}

// Through the one Engine API client (image/engine_api.h: the run's pinned socket), not the docker CLI.
ImageFacts local_facts(const std::string& ref, const std::string& name) {
  image::EngineApi api;
  auto j = api.get_json("/images/" + name + "/json", "docker image inspect " + name);
  if (!j) throw Error("docker image inspect " + name + ": no such image in the engine at unix://" + api.socket());
  ImageFacts f = ImageFacts::from_labels(ref, labels_of(json_member(json_member(*j, "Config"), "Labels")));
  const auto &os = json_member(*j, "Os"), &arch = json_member(*j, "Architecture");
  if (os.is_string() && arch.is_string()) f.platform = os.get<std::string>() + "/" + arch.get<std::string>();
  return f;
}

ImageFacts transport_facts(const std::string& ref, bool insecure) {
  image::TransportOptions o;
  o.registry.insecure_http = insecure;
  auto src = image::open_source(ref, o);
  auto config = image::read_image_config(*src, src->manifest());
  ImageFacts f = ImageFacts::from_labels(ref, config.labels);
  f.platform = config.os + "/" + config.architecture;
  return f;
}

}  // namespace

ImageFacts read_image_facts(const std::string& ref, bool insecure_http) {
  if (ref.rfind("docker://", 0) == 0 || ref.rfind("oci:", 0) == 0) return transport_facts(ref, insecure_http);
  std::string name = ref.rfind("docker-daemon:", 0) == 0 ? ref.substr(14) : ref;
  return local_facts(ref, name);
}

namespace {

struct AutoGpus {
  const char* variant;
  Format format;
  const char* gpus;
};

// What `gpus: auto` becomes (image_facts.h says why).
const AutoGpus kAutoGpus[] = {
    {"gpu", Format::kDocker, "all"}, {"gpu", Format::kCompose, "all"}, {"gpu", Format::kK8s, "1"},
    {"cpu", Format::kDocker, "0"},   {"cpu", Format::kCompose, "0"},   {"cpu", Format::kK8s, "0"},
};

}  // namespace

void resolve_gpus(RunSpec& s, const ImageFacts& img, Format f) {
  if (!s.gpus_auto()) return;
  for (const auto& a : kAutoGpus)
    if (img.variant == a.variant && f == a.format) {
      s.gpus = a.gpus;
      return;
    }
  std::string at = s.gpus_set_at.empty() ? "" : s.gpus_set_at + ": ";
  throw InputError(
      at + "gpus: auto: expected an image labelled io.imgtool.variant=gpu or cpu to choose the GPUs by, found " +
      (img.variant.empty() ? "no such label" : "io.imgtool.variant=" + img.variant) + " on " + img.ref +
      "; set the GPUs yourself (--set gpus=1, or gpus=0 for none)");
}

void check_fits(const RunSpec& s, const ImageFacts& img, const matrix::KnowledgeBase& kb) {
  std::string at = s.gpus_set_at.empty() ? "" : s.gpus_set_at + ": ";
  if (img.variant == "cpu" && s.wants_gpu())
    throw InputError(at + "gpus: expected no GPU for " + img.ref +
                     " (label io.imgtool.variant=cpu: a CPU build of Paddle never uses one), found " +
                     (s.gpu_devices.empty() ? s.gpus : std::to_string(s.gpu_devices.size()) + " device(s)"));
  if (img.variant == "gpu" && !s.wants_gpu())
    throw InputError((at.empty() ? std::string("gpus: ") : at + "gpus: ") + "expected at least one GPU for " + img.ref +
                     " (label io.imgtool.variant=gpu), found " + (s.gpus.empty() ? "none set" : s.gpus));
  if (s.gpu_model.empty() || img.variant != "gpu" || img.cuda.empty()) return;
  auto c = kb.find_gpus(s.gpu_model);  // a family ("V100") is fine when its variants share the compute capability
  bool same_cc = !c.empty() && std::all_of(c.begin(), c.end(), [&](auto* g) { return g->cc == c.front()->cc; });
  if (!same_cc)
    throw InputError(
        "gpu_model: expected a GPU the knowledge base knows (a name as nvidia-smi prints it, or a family like A100), "
        "found '" +
        s.gpu_model + "'" +
        (c.empty() ? "" : " (variants differ in compute capability: add the memory size or form factor)"));
  const matrix::GpuSpec* g = c.front();
  const matrix::ArchSupport* a = kb.arch_for_cc(g->cc);
  auto cuda = Version::parse(img.cuda);
  if (!a || !cuda) return;
  bool too_old = *cuda < *Version::parse(a->first_cuda),
       too_new = !a->last_cuda.empty() && *cuda > *Version::parse(a->last_cuda);
  if (too_old || too_new)
    throw InputError("gpu_model: expected a GPU that CUDA " + img.cuda + " (label io.imgtool.cuda of " + img.ref +
                     ") can serve, found " + s.gpu_model + ": " + a->name + " (compute capability " + g->cc +
                     ") is supported by CUDA " + a->first_cuda + (a->last_cuda.empty() ? "+" : " to " + a->last_cuda) +
                     " (source: " + a->source + ")");
  if (std::string gap = kernel_gap(img.cuda_archs, g->cc); !gap.empty())
    throw InputError("gpu_model: expected a GPU the image's Paddle has kernels for (label io.imgtool.cuda-archs of " +
                     img.ref + "), found " + s.gpu_model + ": " + gap +
                     "; pick an image built for it (imgtool select --gpu '" + s.gpu_model + "')");
}

}  // namespace imgtool::runconf
