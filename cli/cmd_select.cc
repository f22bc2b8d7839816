// imgtool select (--matrix M | --repository docker://HOST/REPO --key PUB) [--host-driver V --gpu NAME] [--host-arch A]
// [--allow-unknown-archs] [--json] Thin front end: candidates from the matrix plan or the signed tags of a repository;
// the host given by hand or detected (as doctor does); prints the best tag, why it fits, and why the better-looking
// ones do not.
#include <sys/utsname.h>

#include <iostream>
#include <memory>

#include "cli/policy_flags.h"
#include "cli/sign_common.h"
#include "cli/subcommand.h"
#include "host/detect.h"
#include "host/registry_candidates.h"
#include "host/select.h"
#include "matrix/matrix.h"
#include "sign/keys.h"

namespace imgtool::cli {
namespace {

struct SelectOptions {
  std::string matrix, repository, key, host_driver, gpu, host_arch;
  bool json = false, allow_unknown_archs = false;
  PolicyFlags policy;  // --repository: the one trust policy (cli/policy_flags.h), as verify and promote
  RegistryFlags registry;
};

host::SelectHost which_host(const SelectOptions& o) {
  if (!o.host_arch.empty() && o.host_arch != "amd64" && o.host_arch != "arm64")
    throw InputError("--host-arch: expected amd64 or arm64, found '" + o.host_arch + "'");
  if (!o.host_driver.empty() || !o.gpu.empty()) {
    if (o.host_driver.empty()) throw InputError("--gpu: expected --host-driver with it, found only --gpu");
    return {o.host_driver, o.gpu, "given by hand", o.host_arch};
  }
  host::SystemHost h;
  host::HostFacts f = host::detect(h, {"", false});
  struct utsname u {};
  std::string cpu = o.host_arch.empty() && ::uname(&u) == 0 ? host::cpu_arch_of_machine(u.machine) : o.host_arch;
  return {f.driver, f.gpus.empty() ? "" : f.gpus.front().name, "this host (as `imgtool doctor` sees it)", cpu};
}

int run_select(const SelectOptions& o) {
  if (o.matrix.empty() == o.repository.empty())
    throw InputError("--matrix/--repository: expected exactly one, found " +
                     std::string(o.matrix.empty() ? "neither" : "both"));
  if (!o.repository.empty() && o.key.empty())
    throw InputError("--key: expected the public key that signs the repository's tags, found nothing");
  auto kb = matrix::KnowledgeBase::load_default();
  std::vector<matrix::Cell> cells;
  std::vector<host::PassedOver> refused;
  host::RegistryCandidates c;
  if (!o.matrix.empty()) {
    cells = matrix::plan_matrix(o.matrix, kb).kept;
  } else {
    auto key = sign::load_public_key(o.key);
    c = host::read_repository(o.repository, *key, kb, o.registry.transport(), o.policy.policy());
    cells = c.cells;
    refused = c.refused;
  }
  auto r = host::select_tag(cells, refused, kb, which_host(o),
                            {.allow_unknown_archs = o.allow_unknown_archs, .platforms = c.platforms});
  if (r.chosen && c.digests.count(r.chosen->tag)) r.repository = c.repository, r.digest = c.digests[r.chosen->tag];
  if (o.json)
    std::cout << host::to_json(r).dump(2) << "\n";
  else
    std::cout << host::render_text(r);
  return r.chosen ? 0 : 1;
}

Registration select_registration{
    {"select",
     "Choose the best tag for a host (this one or --host-driver/--gpu) from a matrix or a signed registry repository",
     [](CLI::App& sub) -> Action {
       auto o = std::make_shared<SelectOptions>();
       sub.add_option("--matrix", o->matrix, "matrix file: candidates are its kept cells");
       sub.add_option("--repository", o->repository,
                      "docker://HOST/REPO: candidates are its tags whose signature verifies with --key");
       sub.add_option("--key", o->key, "public key (PEM) the repository's tags are signed with");
       o->policy.add(sub, false);  // --repository: what a tag must carry to be a candidate
       sub.add_option("--host-driver", o->host_driver, "the host's NVIDIA driver (default: detected on this host)");
       sub.add_option("--gpu", o->gpu, "the host's GPU (KB name, family or nvidia-smi name; default: detected)");
       sub.add_option("--host-arch", o->host_arch,
                      "the host's CPU, amd64 or arm64 (default: this host's; with --gpu, the GPU's KB row, else "
                      "amd64)");
       sub.add_flag("--allow-unknown-archs", o->allow_unknown_archs,
                    "also recommend GPU tags whose compiled GPU code is unknown (each says so): on a GPU it was not "
                    "compiled for, Paddle computes wrong results without an error");
       sub.add_flag("--json", o->json, "machine-readable output");
       o->registry.add(sub);
       return [o] { return run_select(*o); };
     }}};

}  // namespace
}  // namespace imgtool::cli
