// What an image says about itself (its io.imgtool.* labels), and whether a run
// profile fits it. A profile asking for GPUs on a cpu image, no GPU for a gpu
// image, a GPU model whose architecture the image's CUDA cannot serve (KB
// arch.yaml), or one the image's compiled GPU code cannot run on (label
// io.imgtool.cuda-archs) is refused with the reason: InputError, exit 2.
#pragma once
#include <map>
#include <string>

#include "matrix/kb.h"
#include "run/format.h"
#include "run/profile.h"

namespace imgtool::runconf {

struct ImageFacts {
  std::string ref;      // as given
  std::string variant;  // gpu | cpu | "" (unlabelled)
  std::string paddle, python, cuda, cudnn, min_driver, tag;
  std::string cuda_archs;  // io.imgtool.cuda-archs: the GPU code Paddle's libraries hold
  std::string platform;    // its config's "os/architecture" ("linux/amd64"); "" = not read
  static ImageFacts from_labels(const std::string& ref, const std::map<std::string, std::string>& labels);
};

// Reads the labels: `docker-daemon:NAME` or a plain local name through the
// Engine API (image/engine_api.h, GET /images/NAME/json); `docker://…` and `oci:` through the image/ transports
// (manifest -> config blob). Throws Error when the image cannot be read.
ImageFacts read_image_facts(const std::string& ref, bool insecure_http = false);

// `gpus: auto` (base.yaml's default) for this image and output, from its variant label:
//   gpu image  docker/compose: "all" (every GPU, as `imgtool smoke --gpus auto`);
//              k8s: "1" (nvidia.com/gpu is scheduled by count; "all" of a node cannot be asked for)
//   cpu image  "0"
// An image with no (or another) io.imgtool.variant is refused (InputError naming where auto was
// set): the user sets gpus. A spec without `gpus: auto` is left as it is (check_fits judges it).
void resolve_gpus(RunSpec& spec, const ImageFacts& img, Format f);

// Throws InputError naming the profile key (and where it was set) when the
// profile cannot run this image.
void check_fits(const RunSpec& spec, const ImageFacts& img, const matrix::KnowledgeBase& kb);

}  // namespace imgtool::runconf
