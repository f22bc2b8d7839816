// Every shipped profile (run/profiles/*.yaml, run/examples/*.yaml) × image variant × format ×
// gpus (the profile's own, auto, 0, 1), rendered through run-config's one library call
// (render_for_image) for real local images (built FROM scratch with imgtool labels; their facts
// read as run-config reads them) and checked by the real validators (run/testing/validators.h).
// A combination the image contradicts must be refused with an InputError naming gpus.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <future>

#include "core/fs.h"
#include "run/render.h"
#include "run/testing/validators.h"
#include "tests/fixtures.h"
#include "tests/source_kb.h"

using namespace imgtool;
using namespace imgtool::runconf;
namespace fx = imgtool::testing;
namespace rv = imgtool::runconf::testing;
namespace fs = std::filesystem;

namespace {

struct Case {
  std::string profile, variant, gpus;  // gpus "": the profile's own
  Format format;
  std::string name() const {
    static const char* formats[] = {"docker", "compose", "k8s"};
    return fs::path(profile).stem().string() + "-" + variant + "-" + formats[int(format)] + "-gpus" +
           (gpus.empty() ? "_profile" : gpus);
  }
};

std::vector<std::string> shipped_profiles() {
  std::vector<std::string> out;
  for (const char* dir : {"/run/profiles", "/run/examples"})
    for (auto& e : fs::directory_iterator(fx::source_dir() + dir))
      if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// What the image must refuse: GPUs for a cpu image; none for a gpu image, or "all" on Kubernetes.
bool refused(const Case& c, const std::string& effective) {
  bool none = effective.empty() || effective == "0" || effective == "auto";
  if (c.variant == "cpu") return !none;
  return effective.empty() || effective == "0" || (c.format == Format::kK8s && effective == "all");
}

// The two labelled images, named per process (other test runs share the engine), removed at the end.
struct LocalImages {
  std::vector<std::string> names;
  ~LocalImages() {
    for (auto& n : names) imgtool::run({"docker", "rmi", "-f", n});
  }
};

std::string local_image(const std::string& variant, LocalImages& made) {
  std::string name = "imgtool-run-matrix/paddle:3.3.1-" + variant + "-" + std::to_string(::getpid());
  made.names.push_back(name);
  fx::ScratchDir ctx("run-matrix-" + variant);
  std::string df = "FROM scratch\nLABEL io.imgtool.variant=\"" + variant + "\" io.imgtool.paddle=\"3.3.1\"\n";
  if (variant == "gpu") df += "LABEL io.imgtool.cuda=\"12.6\" io.imgtool.min-driver=\"560.28.03\"\n";
  write_file_atomic(ctx.path / "Dockerfile", df);
  auto r = imgtool::run({"docker", "build", "-q", "-t", name, ctx.path.string()});
  REQUIRE_MESSAGE(r.ok(), r.out << r.err);
  return name;
}

// The GPU request in each format's own words.
bool asks_for_gpu(Format f, const std::string& text, const RunSpec& s) {
  if (f == Format::kDocker) return text.find(" --gpus ") != std::string::npos;
  YAML::Node y = YAML::Load(text);
  if (f == Format::kCompose) return bool(y["services"][s.name]["deploy"]["resources"]["reservations"]["devices"]);
  return bool(y["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]);
}

}  // namespace

TEST_CASE("every shipped profile x variant x format x gpus: the real validators accept it, or the image refuses it") {
  const auto& kb = fx::source_kb();
  LocalImages made;
  std::map<std::string, ImageFacts> images;
  for (std::string v : {"gpu", "cpu"}) images[v] = read_image_facts(local_image(v, made));
  CHECK(images["gpu"].variant == "gpu");  // the facts come from the real labels
  CHECK(images["cpu"].variant == "cpu");
  auto profiles = shipped_profiles();
  REQUIRE(profiles.size() >= 4);  // base, detection, ocr, examples/invoice-ocr
  fx::ScratchDir d("run-matrix");
  std::vector<fs::path> k8s_files;
  std::map<std::string, std::future<std::string>> compose;  // distinct documents, validated in parallel
  int rendered = 0, refusals = 0;
  for (auto& p : profiles)
    for (std::string variant : {"gpu", "cpu"})
      for (Format f : {Format::kDocker, Format::kCompose, Format::kK8s})
        for (std::string gpus : {"", "auto", "0", "1"}) {
          Case c{p, variant, gpus, f};
          INFO(c.name());
          RunSpec spec =
              load_profile({{p},
                            gpus.empty() ? std::vector<std::string>{} : std::vector<std::string>{"gpus=" + gpus},
                            {fx::source_dir() + "/run/profiles"}});
          const ImageFacts& img = images[variant];
          RenderOptions o{f, "job", img.ref};
          if (refused(c, gpus.empty() ? spec.gpus : gpus)) {
            std::string why;
            try {
              render_for_image(spec, img, o, kb);
            } catch (const InputError& e) {
              why = e.what();
            }
            bool k8s_all = variant == "gpu" && f == Format::kK8s && (gpus.empty() ? spec.gpus : gpus) == "all";
            CHECK(why.find(k8s_all ? "gpus: expected a GPU count for --format k8s" : img.ref.c_str()) !=
                  std::string::npos);
            ++refusals;
            continue;
          }
          std::string text = render_for_image(spec, img, o, kb);
          ++rendered;
          CHECK(asks_for_gpu(f, text, spec) == (variant == "gpu"));  // auto follows the image
          if (f == Format::kDocker) {
            CHECK_MESSAGE(rv::docker_run_problem(text, img.ref, spec.command) == "", text);
          } else if (f == Format::kCompose) {
            fs::path file = d.path / (c.name() + ".yaml");
            write_file_atomic(file, text);
            if (!compose.count(text)) compose[text] = std::async(std::launch::async, rv::compose_problem, file);
          } else {
            for (std::string kind : {"job", "deployment"}) {
              fs::path file = d.path / (c.name() + "-" + kind + ".yaml");
              write_file_atomic(file, kind == "job" ? text : render_for_image(spec, img, {f, kind, img.ref}, kb));
              k8s_files.push_back(file);
            }
          }
        }
  // (no structured bindings inside CHECK_MESSAGE: clang 14 cannot capture them)
  for (auto& tp : compose) CHECK_MESSAGE(tp.second.get() == "", tp.first);
  for (auto& fp : rv::k8s_problems(k8s_files)) CHECK_MESSAGE(fp.second == "", fp.first);
  // The matrix is what it says: per profile 2 variants x 3 formats x 4 gpus values, each rendered or refused.
  CHECK(rendered + refusals == int(profiles.size()) * 24);
  CHECK(rendered >=
        int(profiles.size()) * 12);  // auto and the one valid count render for both variants in every format
}

TEST_CASE("the validators have teeth: each refuses what its tool refuses") {
  fx::ScratchDir d("run-validators");
  CHECK(rv::shell_words("docker run --name 'a b' -e 'X='\\''y'\\''' i\n") ==
        std::vector<std::string>{"docker", "run", "--name", "a b", "-e", "X='y'", "i"});
  CHECK(rv::docker_run_problem("docker run --rm i python3\n", "i", {"python3"}) == "");
  CHECK(rv::docker_run_problem("docker run --gpus-all i\n", "i", {}).find("--gpus-all is not a `docker run` flag") !=
        std::string::npos);
  CHECK(rv::docker_run_problem("docker run --ulimit memlock=abc i\n", "i", {}).find("invalid argument") !=
        std::string::npos);
  CHECK(rv::docker_run_problem("docker run --gpus all i x\n", "i", {}).find("not the command") != std::string::npos);
  CHECK(rv::docker_run_problem("docker run --shm-size i\n", "i", {}).find("expected the image i") != std::string::npos);
  write_file_atomic(d.path / "compose.yaml", "services:\n  a:\n    image: x\n    shm_size: [1]\n");
  CHECK(rv::compose_problem(d.path / "compose.yaml") != "");
  // The shape of issue 26's `resources: ""`.
  write_file_atomic(d.path / "job.yaml",
                    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n"
                    "      restartPolicy: Never\n      containers:\n      - {name: a, image: b, resources: \"\"}\n");
  auto k8s = rv::k8s_problems({d.path / "job.yaml"});
  CHECK(k8s.at((d.path / "job.yaml").string()).find("'' is not of type 'object'") != std::string::npos);
}
