// imgtool run-config IMAGE --profile P [--profile P2…] [--set k=v…] --format docker|compose|k8s [--kind job|deployment]
// Thin front end: loads the layered profile, reads the image's labels, resolves
// `gpus: auto` by them, refuses what the image cannot do, prints the rendering.
#include <iostream>
#include <memory>

#include "cli/subcommand.h"
#include "core/error.h"
#include "matrix/kb.h"
#include "run/image_facts.h"
#include "run/render.h"

namespace imgtool::cli {
namespace {

struct RunConfigOptions {
  std::string image, format = "docker", kind = "job";
  std::vector<std::string> profiles, sets, profile_dirs;
  bool keys = false, insecure_http = false;
};

void print_keys() {
  for (auto& k : runconf::profile_keys())
    std::cout << k.key
              << std::string(k.key[0] && std::string(k.key).size() < 24 ? 24 - std::string(k.key).size() : 1, ' ')
              << k.help << "\n";
}

// The reference as `docker run` / compose / Kubernetes name it (no transport prefix).
std::string runnable_ref(const std::string& ref) {
  for (const char* p : {"docker://", "docker-daemon:"})
    if (ref.rfind(p, 0) == 0) return ref.substr(std::string(p).size());
  return ref;
}

int run_config(const RunConfigOptions& o) {
  if (o.keys) return print_keys(), 0;
  if (o.image.empty()) throw InputError("IMAGE: expected an image reference, found nothing");
  runconf::RenderOptions r{runconf::parse_format(o.format), o.kind, runnable_ref(o.image)};
  runconf::RunSpec spec = runconf::load_profile(
      {o.profiles.empty() ? std::vector<std::string>{"base"} : o.profiles, o.sets, o.profile_dirs});
  auto kb = matrix::KnowledgeBase::load_default();
  std::cout << runconf::render_for_image(spec, runconf::read_image_facts(o.image, o.insecure_http), r, kb);
  return 0;
}

Registration run_config_registration{
    {"run-config", "Render how to run an image (docker run, compose, Kubernetes) from layered run profiles",
     [](CLI::App& sub) -> Action {
       auto o = std::make_shared<RunConfigOptions>();
       sub.add_option("image", o->image,
                      "image: a local name, docker-daemon:NAME, docker://HOST/REPO:TAG or oci:DIR:TAG");
       sub.add_option("--profile", o->profiles,
                      "profile layer (name in run/profiles or a file), repeatable, applied in order (default: base)");
       sub.add_option("--set", o->sets, "key=value applied last, repeatable (keys: --keys)");
       sub.add_option("--profile-dir", o->profile_dirs, "extra folder searched for profile names first");
       sub.add_option("--format", o->format, "docker | compose | k8s (default docker)");
       sub.add_option("--kind", o->kind, "k8s: job | deployment (default job)");
       sub.add_flag("--keys", o->keys, "list the profile keys and exit");
       sub.add_flag("--insecure-http", o->insecure_http, "allow plain http for a non-loopback registry");
       return [o] { return run_config(*o); };
     }}};

}  // namespace
}  // namespace imgtool::cli
