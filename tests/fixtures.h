// Shared helpers for integration tests: the locally made base image, the
// host-side wheelhouse, the built imgtool binary, scratch folders. Real
// components only (Docker engine, docker-registry, real wheels).
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/process.h"
#include "tests/test_dirs.h"

namespace imgtool::testing {

namespace fs = std::filesystem;

// The imgtool under test: this build's, or IMGTOOL_TEST_IMGTOOL where ctest sets it (the sanitized
// run gives the GPU integration tests the gcc release binary: tests/CMakeLists.txt).
inline std::string imgtool_bin() {
  const char* v = std::getenv("IMGTOOL_TEST_IMGTOOL");
  return v && *v ? v : binary_dir() + "/cli/imgtool";
}

inline std::string env_or(const char* name, const std::string& dflt) {
  const char* v = std::getenv(name);
  return v && *v ? v : dflt;
}

// The local base image (scripts/make-base.sh; cached, so cheap after the first).
inline std::string base_image() {
  std::string tag = env_or("IMGTOOL_TEST_BASE", "imgtool-base/debian:bookworm-py3");
  auto r = run({source_dir() + "/scripts/make-base.sh", tag});
  if (!r.ok()) throw Error("make-base.sh failed: " + r.err);
  return tag;
}

// A wheelhouse holding the real paddlepaddle CPU wheel and its dependencies.
inline std::string wheelhouse() {
  const char* v = std::getenv("IMGTOOL_TEST_WHEELHOUSE");
  if (v && *v) return v;
  auto r = run({source_dir() + "/scripts/wheelhouse.sh", "3.11", "paddlepaddle==3.3.1"});
  if (!r.ok()) throw Error("wheelhouse.sh failed: " + r.err);
  std::string out = r.out;
  while (!out.empty() && (out.back() == '\n')) out.pop_back();
  return out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
}

// A fresh scratch folder per test, removed on destruction.
struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const std::string& name) {
    path = fs::temp_directory_path() / ("imgtool-test-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// What a test builds by hand with `docker build` from a generated cell, removed when it ends, pass
// or fail: the tags it names, and the first stages the classic builder leaves untagged -- found by
// the build's mark (the template's label io.imgtool.build-stage, set by docker_build()).
struct HandBuilt {
  std::string mark = "test-" + std::to_string(::getpid());
  std::vector<std::string> tags;
  // `docker build ARGS…` with this test's mark on the first stage.
  std::vector<std::string> docker_build(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"docker", "build", "--build-arg", "IMGTOOL_BUILD_STAGE=" + mark};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  std::vector<std::string> stages() const {  // image IDs
    std::vector<std::string> ids;
    std::string out = run({"docker", "images", "-q", "--filter", "label=io.imgtool.build-stage=" + mark}).out;
    for (size_t at = 0, nl; (nl = out.find('\n', at)) != std::string::npos; at = nl + 1)
      ids.push_back(out.substr(at, nl - at));
    return ids;
  }
  ~HandBuilt() {
    for (const auto& t : tags) run({"docker", "rmi", "-f", t});
    for (const auto& id : stages()) run({"docker", "rmi", id});
  }
};

// Runs the imgtool CLI with arguments; returns exit code and output.
inline RunResult imgtool(std::vector<std::string> args, const RunOptions& o = {}) {
  args.insert(args.begin(), imgtool_bin());
  return run(args, o);
}

}  // namespace imgtool::testing
