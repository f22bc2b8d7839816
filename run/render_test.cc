#include "run/render.h"

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "matrix/kb.h"
#include "run/image_facts.h"
#include "tests/source_kb.h"
#include "tests/test_dirs.h"

using namespace imgtool;
using namespace imgtool::runconf;

namespace {
const matrix::KnowledgeBase& kb() { return imgtool::testing::source_kb(); }
RunSpec layered(const std::string& profile, std::vector<std::string> sets = {}) {
  return load_profile({{profile}, sets, {imgtool::testing::source_dir() + "/run/profiles"}});
}
RunSpec ocr(std::vector<std::string> sets = {}) { return layered("ocr", std::move(sets)); }
ImageFacts gpu_image(const std::string& cuda = "12.6") {
  return ImageFacts::from_labels("reg/paddle:x", {{"io.imgtool.variant", "gpu"}, {"io.imgtool.cuda", cuda}});
}
ImageFacts cpu_image() { return ImageFacts::from_labels("reg/paddle:3.2.0", {{"io.imgtool.variant", "cpu"}}); }
// The spec as run-config renders it for a gpu image in format `f` (gpus: auto resolved).
RunSpec for_gpu(RunSpec s, Format f = Format::kDocker) {
  resolve_gpus(s, gpu_image(), f);
  return s;
}
// run-config's refusal for `s` on image `i` ("" = it renders): auto resolved, then check_fits.
std::string refusal(RunSpec s, const ImageFacts& i, Format f = Format::kDocker) {
  try {
    resolve_gpus(s, i, f);
    check_fits(s, i, kb());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("docker: one command line with every setting Paddle needs") {
  std::string line = render_docker(for_gpu(ocr({"command=python3 train.py --epochs 2"})), "reg/paddle:3.2.0-gpu");
  for (auto part :
       {"docker run --rm --name paddleocr --gpus all --shm-size 16g --ulimit memlock=-1 --ulimit stack=67108864",
        "--user 1000:1000", "/src:/workspace/code:ro", "/data:/workspace/data", "--workdir /workspace/code",
        "-e PYTHONUNBUFFERED=1", "--cpus 8", "--memory 32g",
        "--log-driver json-file --log-opt max-size=100m --log-opt max-file=3",
        "--health-cmd 'python3 -c import paddle'", "reg/paddle:3.2.0-gpu python3 train.py --epochs 2\n"})
    CHECK_MESSAGE(line.find(part) != std::string::npos, part << " in " << line);
  auto devices = ocr({"gpu_devices=0 2"});
  CHECK(render_docker(devices, "i").find("--gpus '\"device=0,2\"'") != std::string::npos);
  CHECK(render_docker(for_gpu(ocr({"ipc=host"})), "i").find("--ipc host") != std::string::npos);
  CHECK(render_docker(for_gpu(ocr()), "i").find(" -v ./") == std::string::npos);  // docker -v needs absolute host paths
  // What smoke runs with: the runtime part only, and the probe's expectations for it.
  auto rt = runtime_flags(ocr());
  CHECK(std::find(rt.begin(), rt.end(), "memlock=-1") != rt.end());
  CHECK(std::find(rt.begin(), rt.end(), "--workdir") == rt.end());
  auto ex = probe_expectations(ocr());
  CHECK(ex == std::vector<std::string>{"--expect-memlock", "-1", "--expect-stack", "67108864", "--expect-shm",
                                       std::to_string(16ull << 30), "--expect-user", "1000:1000"});
}

TEST_CASE("compose: a service with GPU reservations, ulimits, read-only code") {
  YAML::Node y = YAML::Load(render_compose(for_gpu(ocr({"gpus=1"}), Format::kCompose), "reg/paddle:x"));
  auto svc = y["services"]["paddleocr"];
  CHECK(svc["image"].as<std::string>() == "reg/paddle:x");
  CHECK(svc["shm_size"].as<uint64_t>() == 16ull << 30);
  CHECK(svc["ulimits"]["memlock"]["soft"].as<int>() == -1);
  CHECK(svc["ulimits"]["stack"]["hard"].as<int64_t>() == 67108864);
  CHECK(svc["volumes"][0]["read_only"].as<bool>());
  CHECK(svc["deploy"]["resources"]["reservations"]["devices"][0]["count"].as<int>() == 1);
  CHECK(svc["deploy"]["resources"]["reservations"]["devices"][0]["capabilities"][0].as<std::string>() == "gpu");
}

TEST_CASE("k8s: Job and Deployment") {
  std::string text = render_k8s(for_gpu(ocr({"gpu_model=A10"}), Format::kK8s), "reg/paddle:x", "job", kb());
  // Strings YAML would retype are plain double-quoted, as a person writes them.
  CHECK(text.find("nvidia.com/gpu: \"1\"") != std::string::npos);
  CHECK(text.find("!<") == std::string::npos);
  YAML::Node job = YAML::Load(text);
  CHECK(job["kind"].as<std::string>() == "Job");
  CHECK(job["spec"]["backoffLimit"].as<int>() == 4);
  auto pod = job["spec"]["template"]["spec"];
  CHECK(pod["restartPolicy"].as<std::string>() == "OnFailure");
  CHECK(pod["securityContext"]["runAsNonRoot"].as<bool>());
  CHECK(pod["securityContext"]["runAsUser"].as<int>() == 1000);
  CHECK(pod["nodeSelector"]["nvidia.com/gpu.product"].as<std::string>().find("A10") != std::string::npos);
  auto c = pod["containers"][0];
  CHECK(c["resources"]["limits"]["nvidia.com/gpu"].as<std::string>() == "1");
  CHECK(c["resources"]["limits"]["memory"].as<std::string>() == "32Gi");
  CHECK(c["livenessProbe"]["exec"]["command"][0].as<std::string>() == "python3");
  CHECK(pod["volumes"][0]["emptyDir"]["medium"].as<std::string>() == "Memory");
  CHECK(pod["volumes"][0]["emptyDir"]["sizeLimit"].as<std::string>() == "16Gi");
  CHECK(c["volumeMounts"][0]["mountPath"].as<std::string>() == "/dev/shm");
  YAML::Node dep = YAML::Load(render_k8s(for_gpu(ocr(), Format::kK8s), "reg/paddle:x", "deployment", kb()));
  CHECK(dep["kind"].as<std::string>() == "Deployment");
  CHECK(dep["spec"]["template"]["spec"]["restartPolicy"].as<std::string>() == "Always");
  CHECK_THROWS_AS(render_k8s(ocr({"gpus=all"}), "i", "job", kb()), InputError);
  CHECK_THROWS_AS(render_k8s(for_gpu(ocr()), "i", "cronjob", kb()), InputError);
}

TEST_CASE("k8s: no limits and no GPU is no `resources` key, never `resources: \"\"`") {
  std::string text = render_k8s(layered("base", {"gpus=0"}), "reg/paddle:3.2.0", "job", kb());
  CHECK(text.find("resources") == std::string::npos);
  YAML::Node c = YAML::Load(text)["spec"]["template"]["spec"]["containers"][0];
  CHECK(c["name"].as<std::string>() == "paddle");
  CHECK_FALSE(c["resources"]);
}

TEST_CASE("gpus: auto follows the image's variant, per format; set values are the user's") {
  RunSpec base = layered("base");
  CHECK(base.gpus == "auto");
  CHECK(base.gpus_auto());
  CHECK_FALSE(base.wants_gpu());
  struct Row {
    const char* variant;
    Format f;
    const char* gpus;
  };
  for (Row r : {Row{"gpu", Format::kDocker, "all"}, Row{"gpu", Format::kCompose, "all"}, Row{"gpu", Format::kK8s, "1"},
                Row{"cpu", Format::kDocker, "0"}, Row{"cpu", Format::kCompose, "0"}, Row{"cpu", Format::kK8s, "0"}}) {
    RunSpec s = base;
    resolve_gpus(s, ImageFacts::from_labels("i", {{"io.imgtool.variant", r.variant}}), r.f);
    CHECK_MESSAGE(s.gpus == r.gpus, r.variant << " " << int(r.f));
  }
  RunSpec two = ocr({"gpus=2"});
  resolve_gpus(two, cpu_image(), Format::kDocker);
  CHECK(two.gpus == "2");  // set by the user: kept, and check_fits refuses it for a cpu image
  // Unlabelled: nothing to choose by; the line names where auto was set and what to do.
  std::string none = refusal(base, ImageFacts::from_labels("other/paddle:1", {}));
  CHECK(none.find("/run/profiles/base.yaml:") != std::string::npos);
  CHECK(none.find(
            "gpus: auto: expected an image labelled io.imgtool.variant=gpu or cpu to choose the GPUs by, found no such "
            "label on other/paddle:1; set the GPUs yourself (--set gpus=1") != std::string::npos);
  // A renderer handed an unresolved spec is a caller's mistake (exit 1), not the user's.
  CHECK_THROWS_AS(render_docker(base, "i"), Error);
  CHECK_THROWS_AS(render_compose(base, "i"), Error);
  CHECK_THROWS_AS(render_k8s(base, "i", "job", kb()), Error);
  // render_for_image: the one call of run-config.
  CHECK(render_for_image(base, cpu_image(), {Format::kDocker, "job", "i"}, kb()).find("--gpus") == std::string::npos);
  CHECK(render_for_image(base, gpu_image(), {Format::kDocker, "job", "i"}, kb()).find("--gpus all") !=
        std::string::npos);
  CHECK_THROWS_AS(render_for_image(ocr({"gpus=1"}), cpu_image(), {Format::kDocker, "job", "i"}, kb()), InputError);
}

TEST_CASE("image facts refuse what the image cannot do") {
  auto cpu = cpu_image();
  CHECK(refusal(ocr({"gpus=1"}), cpu)
            .rfind("--set gpus=1: gpus: expected no GPU for reg/paddle:3.2.0 (label io.imgtool.variant=cpu", 0) == 0);
  CHECK(refusal(layered("detection"), cpu).find("/run/profiles/detection.yaml:") !=
        std::string::npos);            // where gpus was set
  CHECK(refusal(ocr(), cpu).empty());  // auto: none
  CHECK(refusal(ocr({"gpus=0"}), cpu).empty());
  CHECK(refusal(ocr(), gpu_image("12.6")).empty());  // auto: all
  CHECK(refusal(ocr({"gpus=0"}), gpu_image("12.6")).rfind("--set gpus=0: gpus: expected at least one GPU", 0) == 0);
  // Volta (7.0) ends at CUDA 12.9 (arch.yaml): a CUDA 13.0 image cannot serve a V100.
  CHECK(refusal(ocr({"gpu_model=V100"}), gpu_image("13.0")).find("expected a GPU that CUDA 13.0") != std::string::npos);
  CHECK(refusal(ocr({"gpu_model=V100"}), gpu_image("12.6")).empty());
  // Blackwell needs CUDA 12.8+.
  CHECK(refusal(ocr({"gpu_model=B200"}), gpu_image("12.6")).find("Blackwell") != std::string::npos);
  // The image's compiled GPU code (io.imgtool.cuda-archs): PyPI's Paddle 2.6.2 has no kernel for an H100.
  auto p262 =
      ImageFacts::from_labels("reg/paddle:2.6.2-gpu", {{"io.imgtool.variant", "gpu"},
                                                       {"io.imgtool.cuda", "11.8"},
                                                       {"io.imgtool.cuda-archs", "sm_61,sm_70,sm_75,sm_80,sm_86"}});
  std::string h100 = refusal(ocr({"gpu_model=NVIDIA H100 80GB HBM3"}), p262);
  CHECK(h100.find("gpu_model: expected a GPU the image's Paddle has kernels for (label io.imgtool.cuda-archs of "
                  "reg/paddle:2.6.2-gpu)") != std::string::npos);
  CHECK(h100.find("no kernel image is available for execution on the device") != std::string::npos);
  CHECK(refusal(ocr({"gpu_model=A100"}), p262).empty());
}

TEST_CASE(
    "k8s: least privilege — no service-account token, RuntimeDefault seccomp, every capability dropped, no "
    "escalation") {
  for (std::string kind : {"job", "deployment"}) {
    YAML::Node doc = YAML::Load(render_k8s(for_gpu(ocr(), Format::kK8s), "reg/paddle:x", kind, kb()));
    auto pod = doc["spec"]["template"]["spec"];
    CHECK_FALSE(pod["automountServiceAccountToken"].as<bool>());
    CHECK(pod["securityContext"]["seccompProfile"]["type"].as<std::string>() == "RuntimeDefault");
    CHECK(pod["securityContext"]["runAsNonRoot"].as<bool>());
    auto sc = pod["containers"][0]["securityContext"];
    CHECK_FALSE(sc["allowPrivilegeEscalation"].as<bool>());
    REQUIRE(sc["capabilities"]["drop"].size() == 1);
    CHECK(sc["capabilities"]["drop"][0].as<std::string>() == "ALL");
    CHECK_FALSE(sc["capabilities"]["add"]);
    CHECK(sc["runAsNonRoot"].as<bool>());
    CHECK(sc["runAsUser"].as<int>() == 1000);
  }
}
