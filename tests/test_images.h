// Small test images shared by the smoke and verify integration tests, built with
// the real Docker engine from the local base and the real paddlepaddle CPU wheel.
// Each is built once and reused: a label holds the hash of its recipe.
#pragma once
#include <string>

#include "core/hash.h"
#include "tests/fixtures.h"

namespace imgtool::testing {

// Builds `tag` from `dockerfile` with `context` unless an image with the same recipe exists.
inline std::string ensure_image(const std::string& tag, const std::string& dockerfile, const std::string& context) {
  std::string key = sha256_hex(dockerfile).substr(0, 16);
  auto have = run({"docker", "image", "inspect", "-f", "{{ index .Config.Labels \"imgtool.test.key\" }}", tag});
  if (have.ok() && have.out.substr(0, 16) == key) return tag;
  auto r = run({"docker", "build", "-q", "-t", tag, "--label", "imgtool.test.key=" + key, "-f", "-", context},
               {.stdin_data = dockerfile, .timeout = std::chrono::seconds(1200)});
  if (!r.ok()) throw Error("docker build " + tag + " failed: " + r.err + r.out);
  return tag;
}

// `from` plus the io.imgtool.variant/tag labels (and a CUDA 12.6 claim for gpu).
inline std::string labelled(const std::string& tag, const std::string& from, const std::string& variant) {
  ScratchDir ctx("labelled-ctx");
  std::string df = "FROM " + from + "\nLABEL io.imgtool.variant=" + variant + " io.imgtool.tag=" + tag + "\n";
  if (variant == "gpu")
    df += "LABEL io.imgtool.cuda=12.6\nENV NVIDIA_REQUIRE_CUDA=\"cuda>=12.6 brand=tesla,driver>=470,driver<471\"\n";
  return ensure_image(tag, df, ctx.path.string());
}

// The build context: the wheelhouse's wheels, hard-linked (copied across filesystems).
inline std::string paddle_context() {
  fs::path wh = wheelhouse();
  fs::path ctx = fs::path(env_or("IMGTOOL_CACHE", env_or("HOME", "/tmp") + "/.cache/imgtool")) / "test-contexts" /
                 "paddle-cpu" / wh.filename();
  fs::create_directories(ctx);
  for (auto& e : fs::directory_iterator(wh)) {
    if (e.path().extension() != ".whl" || fs::exists(ctx / e.path().filename())) continue;
    std::error_code ec;
    fs::create_hard_link(e.path(), ctx / e.path().filename(), ec);
    if (ec) fs::copy_file(e.path(), ctx / e.path().filename());
  }
  return ctx.string();
}

// The local base + a venv with the real paddlepaddle 3.3.1 CPU wheel (the base carries libgomp1).
inline std::string paddle_cpu_image() {
  static std::string tag = [] {
    return ensure_image("imgtool-test/paddle-cpu:3.3.1",
                        "FROM " + base_image() +
                            "\nCOPY *.whl /wheels/\n"
                            "RUN python3 -m venv /opt/venv && /opt/venv/bin/pip install -q --no-index "
                            "--find-links /wheels paddlepaddle && rm -rf /wheels\n"
                            "ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n",
                        paddle_context());
  }();
  return tag;
}

}  // namespace imgtool::testing
