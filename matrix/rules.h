// The rules that decide whether a combination becomes a kept cell. Each rule
// checks one fact of the KB and, when it fails, names itself, the fact, and
// the fact's source:
//   "paddle 2.6.2 × cuda 12.6: Paddle 2.6 GPU wheels exist for CUDA 11.2, 11.6, 11.7, 11.8, 12.0"
// Rules are a table (combo_rules()); the first failing rule skips the combination.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "matrix/cell.h"
#include "matrix/expand.h"
#include "matrix/kb.h"

namespace imgtool::matrix {

struct Verdict {
  std::string rule;    // rule id, e.g. "paddle-cuda"
  std::string reason;  // "<axes>: <fact>"
  std::string source;  // source of the fact
};

struct RuleContext {
  const Combo& combo;
  const KnowledgeBase& kb;
  const MatrixSpec& spec;
  const PaddleRelease& release;  // release of combo.axes["paddle"] (validated at parse time)
};

struct Rule {
  const char* id;
  const char* what;  // one line for --help / docs
  std::optional<Verdict> (*check)(const RuleContext&);
};

// Rules on the combination, in order of evaluation.
const std::vector<Rule>& combo_rules();
std::optional<Verdict> first_failure(const RuleContext& ctx);

// Rules on the RESOLVED cell: its claims are satisfiable by its recipe (the base and what the
// template installs), in order of evaluation:
//   recipe-base      the CUDA base it names exists in the KB (a wheel base: kb/cuda_wheels.yaml
//                    row, made on Debian 12)
//   recipe-cudnn     the claimed cuDNN is what the base ships, NVIDIA's apt package the template
//                    installs, or the one Paddle's wheel pins
//   installed-once   a wheel that brings its own CUDA libraries gets a base with none
//   trt-cuda-major   the TensorRT wheel is built for the cell's CUDA major
//   trt-index        a pip-installed TensorRT comes from the matrix's tensorrt_index (PyPI has stubs only)
//   recipe-loads     every library Paddle requires resolves under the name it dlopens: the recipe
//                    ships its soname (Paddle's pip requirements, the wheel base's wheels, the
//                    nvidia/cuda image's set) and, for an unversioned name, links it
struct RecipeRule {
  const char* id;
  const char* what;
  std::optional<Verdict> (*check)(const Cell&, const RuleContext&);
};
const std::vector<RecipeRule>& recipe_rules();
std::optional<Verdict> first_recipe_failure(const Cell& cell, const RuleContext& ctx);

// Whether this Paddle build dlopens `lib` by its unversioned name (libnvrtc.so), and the soname a
// cell's CUDA/cuDNN major gives `lib` ("" when there is none: nvJitLink on CUDA 11).
bool dlopens_unversioned(const PaddleLoads& loads, const std::string& lib);
std::string cell_soname(const Cell& c, const NvidiaLibrary& lib);
// The links a cell's recipe makes for those names ("libnvrtc.so=libnvrtc.so.12[:optional]").
std::vector<std::string> dynload_links(const Cell& c, const KnowledgeBase& kb);

// With only_published: the resolved cell's tag must be one Paddle published.
// `unconfirmed` is set when the tag is only in the KB's unconfirmed list.
std::optional<Verdict> published_rule(const Cell& cell, const RuleContext& ctx, bool& unconfirmed);

}  // namespace imgtool::matrix
